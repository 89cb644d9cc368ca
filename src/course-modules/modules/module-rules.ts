import { ValidateBy, type ValidationOptions } from 'class-validator';
import { isInt64 } from '../../core/ids.js';
import { INVALID_ROLE_MESSAGE, parseModuleRole } from './module-role.js';

/** The body rules of docs/api.md §4 (create / edit) and §4.1 (personnel), with their exact messages. */
export const CODE_MESSAGE = 'Module code must be in format ABC123';
export const YEAR_MESSAGE = 'Year must be between 1900 and 9999';
export const DESCRIPTION_MESSAGE = 'Description must be at most 1000 characters';
export const DESCRIPTION_NUL_MESSAGE = 'Description must not contain NUL characters';
export const CREDITS_MESSAGE = 'Credits must be a positive integer';

export const YEAR_MIN = 1900;
export const YEAR_MAX = 9999;
export const CREDITS_MIN = 1;
export const CREDITS_MAX = 2_147_483_647;
/** The column is varchar(255); longer codes fail the code rule rather than the database. */
export const CODE_MAX = 255;
export const DESCRIPTION_MAX = 1000;
export const ID_LIST_MAX = 1000;

/** Characters as PostgreSQL's varchar counts them: Unicode code points. */
export const codePoints = (text: string) => [...text].length;

/** The first rule a `description` breaks, or undefined (null and absent are allowed by `@IsOptional`). */
export function descriptionProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || codePoints(value) > DESCRIPTION_MAX) return DESCRIPTION_MESSAGE;
  // PostgreSQL text cannot hold U+0000; refusing it here keeps it a 400 instead of a database error.
  if (value.includes('\u0000')) return DESCRIPTION_NUL_MESSAGE;
  return undefined;
}

export function IsModuleDescription(options?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isModuleDescription',
      validator: {
        validate: (value) => descriptionProblem(value) === undefined,
        defaultMessage: (args) => descriptionProblem(args?.value) ?? DESCRIPTION_MESSAGE,
      },
    },
    options,
  );
}

interface IdListMessages {
  /** Missing, null or empty. */
  required: string;
  tooMany: string;
  /** Not an array, or an element that is not an integer within 64 bits. */
  invalid: string;
}

export const MODULE_IDS_MESSAGES: IdListMessages = {
  required: 'At least one module ID is required',
  tooMany: `At most ${ID_LIST_MAX} module IDs are allowed per request`,
  invalid: 'module_ids must be an array of 64-bit integers',
};

export const USER_IDS_MESSAGES: IdListMessages = {
  required: 'At least one user ID is required',
  tooMany: `At most ${ID_LIST_MAX} user IDs are allowed per request`,
  invalid: 'user_ids must be an array of 64-bit integers',
};

/** The first rule an id list breaks (1..1000 integers within 64 bits), or undefined. */
export function idListProblem(value: unknown, messages: IdListMessages): string | undefined {
  if (value === undefined || value === null) return messages.required;
  if (!Array.isArray(value)) return messages.invalid;
  if (value.length === 0) return messages.required;
  if (value.length > ID_LIST_MAX) return messages.tooMany;
  return value.every((id) => isInt64(id)) ? undefined : messages.invalid;
}

/** A required list of 1..1000 ids; one decorator, so its messages never depend on decorator order. */
export function IsIdList(messages: IdListMessages) {
  return ValidateBy({
    name: 'isIdList',
    validator: {
      validate: (value) => idListProblem(value, messages) === undefined,
      defaultMessage: (args) => idListProblem(args?.value, messages) ?? messages.invalid,
    },
  });
}

/** A module role in any accepted spelling (`Tutor`, `tutor`, `assistant_lecturer`). */
export function IsModuleRoleName() {
  return ValidateBy(
    { name: 'isModuleRoleName', validator: { validate: (value) => parseModuleRole(value) !== undefined } },
    { message: INVALID_ROLE_MESSAGE },
  );
}
