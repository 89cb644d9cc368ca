import { AppError, fixedError } from '../../core/errors.js';

export const MODULE_NOT_FOUND_MESSAGE = 'Module not found';
export const DUPLICATE_MODULE_MESSAGE = 'A module with this code already exists for this year';

export class ModuleNotFound extends fixedError(404, MODULE_NOT_FOUND_MESSAGE) {}

/** `(code, year)` clashes with another module; raised from the unique violation, never a pre-check. */
export class DuplicateModule extends fixedError(409, DUPLICATE_MODULE_MESSAGE) {}

export class UserDoesNotExist extends AppError {
  constructor(id: number | string) {
    super(404, `User with ID ${id} does not exist`);
  }
}
