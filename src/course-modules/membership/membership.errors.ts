import { fixedError } from '../../core/errors.js';
import { DATES_ORDER_MESSAGE } from './membership-status.js';

export const ROLE_NOT_HELD_MESSAGE = 'Some users are not assigned with this role';
export const NOT_MEMBERS_MESSAGE = 'Some users are not members of this module';

/** A personnel removal names a user who does not hold the role in the module. */
export class RoleNotHeld extends fixedError(409, ROLE_NOT_HELD_MESSAGE) {}

/** A membership update names a user who holds no role in the module. */
export class NotMembers extends fixedError(409, NOT_MEMBERS_MESSAGE) {}

/** The stored and the new dates together would put `ends_at` at or before `starts_at`. */
export class DatesOutOfOrder extends fixedError(400, DATES_ORDER_MESSAGE) {}
