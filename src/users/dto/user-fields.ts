import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, ValidateBy, ValidateIf } from 'class-validator';
import {
  ACTIVE_MESSAGE,
  DISPLAY_NAME_MAX,
  DISPLAY_NAME_MESSAGE,
  EXTERNAL_ID_MAX,
  EXTERNAL_ID_MESSAGE,
  FAMILY_NAME_MESSAGE,
  GIVEN_NAME_MESSAGE,
  NAME_MAX,
} from '../user-rules.js';

/** Code points, as docs/api.md §1 counts characters. */
const codePoints = (value: string) => [...value].length;

/**
 * What is wrong with an optional text field of §14 (null allowed), or undefined. PostgreSQL text cannot hold
 * U+0000, so such a value is refused here rather than failing its statement.
 */
export function textProblem(
  field: string,
  value: unknown,
  min: number,
  max: number,
  message: string,
): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'string' || codePoints(value) < min || codePoints(value) > max) return message;
  if (value.includes('\u0000')) return `${field} must not contain NUL characters`;
  return undefined;
}

/** A §14 text field: optional, a string within its bounds or null. */
function NullableText(
  field: string,
  min: number,
  max: number,
  message: string,
  example: string,
  description?: string,
) {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'string',
      nullable: true,
      ...(min > 0 ? { minLength: min } : {}),
      maxLength: max,
      example,
      ...(description ? { description } : {}),
    }),
    ValidateBy({
      name: `${field}Text`,
      validator: {
        validate: (value: unknown) => textProblem(field, value, min, max, message) === undefined,
        defaultMessage: (args) => textProblem(field, args?.value, min, max, message) ?? message,
      },
    }),
  );
}

export const GivenName = () => NullableText('given_name', 0, NAME_MAX, GIVEN_NAME_MESSAGE, 'Jane');
export const FamilyName = () => NullableText('family_name', 0, NAME_MAX, FAMILY_NAME_MESSAGE, 'Smith');
export const DisplayName = () =>
  NullableText('display_name', 0, DISPLAY_NAME_MAX, DISPLAY_NAME_MESSAGE, 'Jane Smith');
export const ExternalId = () =>
  NullableText(
    'external_id',
    1,
    EXTERNAL_ID_MAX,
    EXTERNAL_ID_MESSAGE,
    '8f3c2a4e-51b7-4d0e-9a6f-2b1d7c9e0f13',
    "The identity provider's id for this person; unique, case-sensitive (409 on a clash).",
  );

/** `active`: optional, but null is not "absent": it is refused like any other non-boolean. */
export const Active = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({ type: 'boolean', default: true, description, example: true }),
    ValidateIf((dto: { active?: unknown }) => dto.active !== undefined),
    IsBoolean({ message: ACTIVE_MESSAGE }),
  );
