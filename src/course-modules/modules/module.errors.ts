import { AppError, fixedError } from '../../core/errors.js';
import { DATES_ORDER_MESSAGE } from '../membership/membership-status.js';

export const MODULE_NOT_FOUND_MESSAGE = 'Module not found';
export const DUPLICATE_MODULE_MESSAGE = 'A module with this code already exists for this year';
export const ROLE_NOT_HELD_MESSAGE = 'Some users are not assigned with this role';
export const NOT_MEMBERS_MESSAGE = 'Some users are not members of this module';

export class ModuleNotFound extends fixedError(404, MODULE_NOT_FOUND_MESSAGE) {}

/** `(code, year)` clashes with another module; raised from the unique violation, never a pre-check. */
export class DuplicateModule extends fixedError(409, DUPLICATE_MODULE_MESSAGE) {}

export class UserDoesNotExist extends AppError {
  constructor(id: number | string) {
    super(404, `User with ID ${id} does not exist`);
  }
}

/** A personnel removal names a user who does not hold the role in the module. */
export class RoleNotHeld extends fixedError(409, ROLE_NOT_HELD_MESSAGE) {}

/** A membership update names a user who holds no role in the module. */
export class NotMembers extends fixedError(409, NOT_MEMBERS_MESSAGE) {}

/** The stored and the new dates together would put `ends_at` at or before `starts_at`. */
export class DatesOutOfOrder extends fixedError(400, DATES_ORDER_MESSAGE) {}
