import { AppError, fixedError, NOTHING_TO_UPDATE_MESSAGE } from '../core/errors.js';

export const USER_NOT_FOUND_MESSAGE = 'User not found';

export class UserNotFound extends fixedError(404, USER_NOT_FOUND_MESSAGE) {}

export class DuplicateUsername extends fixedError(409, 'A user with this username already exists') {}

export class DuplicateEmail extends fixedError(409, 'A user with this email already exists') {}

export const DUPLICATE_EXTERNAL_ID_MESSAGE = 'A user with this external ID already exists';

export class DuplicateExternalId extends fixedError(409, DUPLICATE_EXTERNAL_ID_MESSAGE) {}

/** Bulk create: every clashing username or email, as sent, in request order. */
export class DuplicateUsers extends AppError {
  constructor(values: readonly string[]) {
    super(409, `A user with this username or email already exists: ${values.join(', ')}`);
  }
}

export class NothingToUpdate extends fixedError(400, NOTHING_TO_UPDATE_MESSAGE) {}

export const CANNOT_DELETE_SELF_MESSAGE = 'You cannot delete your own account';

export class CannotDeleteSelf extends fixedError(403, CANNOT_DELETE_SELF_MESSAGE) {}

export const CANNOT_DEMOTE_SELF_MESSAGE = 'You cannot remove your own admin rights';

export class CannotDemoteSelf extends fixedError(403, CANNOT_DEMOTE_SELF_MESSAGE) {}

export const CANNOT_DEACTIVATE_SELF_MESSAGE = 'You cannot deactivate your own account';

export class CannotDeactivateSelf extends fixedError(403, CANNOT_DEACTIVATE_SELF_MESSAGE) {}

export const AVATAR_NOT_FOUND_MESSAGE = 'Avatar not found';

export class AvatarNotFound extends fixedError(404, AVATAR_NOT_FOUND_MESSAGE) {}

export const UNSUPPORTED_FILE_TYPE_MESSAGE = 'Unsupported file type';

export class UnsupportedFileType extends fixedError(415, UNSUPPORTED_FILE_TYPE_MESSAGE) {}

export const FILE_TOO_LARGE_MESSAGE = 'File too large';

export class FileTooLarge extends fixedError(413, FILE_TOO_LARGE_MESSAGE) {}

export const SSO_IDENTITY_TAKEN_MESSAGE = 'This identity is bound to another user';

/** A single sign-on binding to an `(issuer, subject)` another user is bound to (docs/sso.md). */
export class SsoIdentityTaken extends fixedError(409, SSO_IDENTITY_TAKEN_MESSAGE) {}
