import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, ValidateBy, type ValidationArguments } from 'class-validator';
import { MODULE_ROLES, type ModuleRole, parseModuleRole } from '../../modules/module-role.js';
import { CODE_MAX, YEAR_MAX, YEAR_MESSAGE, YEAR_MIN } from '../../modules/module-rules.js';
import { DEFAULT_ROLLOVER_ROLES, ROLLOVER_MAX, SAME_YEAR_MESSAGE } from '../rollover.js';

/** The body rules of docs/api.md §13 that the contract leaves to the service, with their messages. */
export const CODES_MESSAGE = 'codes must be an array of module codes in format ABC123';
export const CODES_EMPTY_MESSAGE = 'codes must hold at least one module code';
export const ROLES_MESSAGE = 'roles must be an array of roles: Lecturer, AssistantLecturer, Tutor, Student';

/** What the service gets: years checked, codes as sent (absent = every module), roles canonical and distinct. */
export interface RolloverInput {
  fromYear: number;
  toYear: number;
  codes: string[] | undefined;
  roles: ModuleRole[];
}

const isYear = (value: unknown) =>
  typeof value === 'number' && Number.isInteger(value) && value >= YEAR_MIN && value <= YEAR_MAX;

/** `to_year`: a year as on module create, and (when `from_year` is one too) another year. */
function toYearProblem(value: unknown, body: object): string | undefined {
  if (!isYear(value)) return YEAR_MESSAGE;
  return value === (body as { from_year?: unknown }).from_year ? SAME_YEAR_MESSAGE : undefined;
}

/** The shape of `codes` (the pattern is the pipe's, from config); null counts as absent. */
function codesProblem(value: unknown): string | undefined {
  if (!Array.isArray(value) || !value.every((code) => typeof code === 'string')) return CODES_MESSAGE;
  return value.length === 0 ? CODES_EMPTY_MESSAGE : undefined;
}

const rule = (name: string, problem: (value: unknown, args?: ValidationArguments) => string | undefined) =>
  ValidateBy({
    name,
    validator: {
      validate: (value, args) => problem(value, args) === undefined,
      defaultMessage: (args) => problem(args?.value, args) ?? YEAR_MESSAGE,
    },
  });

/**
 * `POST /api/modules/rollover`. Validated by {@link RolloverBodyPipe}, which adds the configured code pattern;
 * one decorator per field, so a field's message never depends on decorator order.
 */
export class RolloverBodyDto {
  @ApiProperty({ type: 'integer', format: 'int32', minimum: YEAR_MIN, maximum: YEAR_MAX, example: 2026 })
  @rule('isYear', (value) => (isYear(value) ? undefined : YEAR_MESSAGE))
  from_year!: number;

  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: YEAR_MIN,
    maximum: YEAR_MAX,
    description: 'Must differ from `from_year`.',
    example: 2027,
  })
  @rule('isTargetYear', (value, args) => toYearProblem(value, args?.object ?? {}))
  to_year!: number;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', maxLength: CODE_MAX },
    minItems: 1,
    maxItems: ROLLOVER_MAX,
    nullable: true,
    description:
      'Codes of modules of `from_year` to roll over (each matching MODULE_CODE_PATTERN); absent or null = every ' +
      `module of \`from_year\`. A code with no module there is a \`missing\` row. More than ${ROLLOVER_MAX} → 413.`,
    example: ['CSC101'],
  })
  @IsOptional()
  @rule('isModuleCodes', (value) => codesProblem(value))
  codes?: string[] | null;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', enum: [...MODULE_ROLES] },
    nullable: true,
    description:
      'The role rows to copy (any spelling of docs/api.md §1; repeats count once; an empty list copies nobody). ' +
      `Absent or null = ${DEFAULT_ROLLOVER_ROLES.join(', ')}.`,
    example: [...DEFAULT_ROLLOVER_ROLES],
  })
  @IsOptional()
  @rule('isModuleRoles', (value) =>
    Array.isArray(value) && value.every((role) => parseModuleRole(role) !== undefined)
      ? undefined
      : ROLES_MESSAGE,
  )
  roles?: string[] | null;
}
