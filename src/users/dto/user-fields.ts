import { applyDecorators } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsEmail, IsString, Length, Matches, ValidateBy, ValidateIf } from 'class-validator';
import {
  ACTIVE_MESSAGE,
  ADMIN_MESSAGE,
  DISPLAY_NAME_MAX,
  DISPLAY_NAME_MESSAGE,
  EMAIL_MESSAGE,
  EMAIL_OPTIONS,
  EMAIL_SCHEMA,
  EXTERNAL_ID_MAX,
  EXTERNAL_ID_MESSAGE,
  FAMILY_NAME_MESSAGE,
  GIVEN_NAME_MESSAGE,
  NAME_MAX,
  PASSWORD_MAX,
  PASSWORD_MESSAGE,
  PASSWORD_MIN,
  USERNAME_MAX,
  USERNAME_MESSAGE,
  USERNAME_PATTERN,
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

/**
 * Whether a body must name the field: `required` (a new user), or `optional` (a change: an omitted field is left
 * as it is, and the rules check a field only when it is there; null is not "absent", it is refused like any
 * other wrong value).
 */
type Presence = 'required' | 'optional';

/** The field's OpenAPI property and, when optional, the condition its rules run under. */
function declared(field: string, as: Presence, property: ApiPropertyOptions) {
  return as === 'required'
    ? [ApiProperty(property)]
    : [ApiPropertyOptional(property), ValidateIf((dto: Record<string, unknown>) => dto[field] !== undefined)];
}

export const Username = (as: Presence, example: string) =>
  applyDecorators(
    ...declared('username', as, {
      minLength: 3,
      maxLength: USERNAME_MAX,
      pattern: USERNAME_PATTERN.source,
      description: 'Unique, case-insensitively.',
      example,
    }),
    IsString({ message: USERNAME_MESSAGE }),
    Matches(USERNAME_PATTERN, { message: USERNAME_MESSAGE }),
  );

export const Email = (as: Presence, example: string) =>
  applyDecorators(
    ...declared('email', as, {
      pattern: EMAIL_SCHEMA.pattern,
      description: `${EMAIL_SCHEMA.description} Stored lower-case; unique, case-insensitively.`,
      example,
    }),
    IsString({ message: EMAIL_MESSAGE }),
    IsEmail(EMAIL_OPTIONS, { message: EMAIL_MESSAGE }),
  );

export const Password = (as: Presence, description: string, example: string) =>
  applyDecorators(
    ...declared('password', as, {
      minLength: PASSWORD_MIN,
      maxLength: PASSWORD_MAX,
      format: 'password',
      description,
      example,
    }),
    IsString({ message: PASSWORD_MESSAGE }),
    // class-validator's Length counts code points (surrogate pairs as one), as docs/api.md §1 asks.
    Length(PASSWORD_MIN, PASSWORD_MAX, { message: PASSWORD_MESSAGE }),
  );

/** `admin`: optional in every body. */
export const Admin = (property: ApiPropertyOptions) =>
  applyDecorators(
    ...declared('admin', 'optional', { type: 'boolean', ...property }),
    IsBoolean({ message: ADMIN_MESSAGE }),
  );

/** `active`: optional in every body. */
export const Active = (description: string) =>
  applyDecorators(
    ...declared('active', 'optional', { type: 'boolean', default: true, description, example: true }),
    IsBoolean({ message: ACTIVE_MESSAGE }),
  );
