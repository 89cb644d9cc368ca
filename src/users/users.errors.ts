import { AppError, ValidationFailed } from '../core/errors.js';

export class UserNotFound extends AppError {
  constructor() {
    super(404, 'User not found');
  }
}

export class DuplicateUsername extends AppError {
  constructor() {
    super(409, 'A user with this username already exists');
  }
}

export class DuplicateEmail extends AppError {
  constructor() {
    super(409, 'A user with this email already exists');
  }
}

/** Bulk create: every clashing username or email, as sent, in request order. */
export class DuplicateUsers extends AppError {
  constructor(values: readonly string[]) {
    super(409, `A user with this username or email already exists: ${values.join(', ')}`);
  }
}

export class NothingToUpdate extends ValidationFailed {
  constructor() {
    super('At least one field must be provided');
  }
}

export class CannotDeleteSelf extends AppError {
  constructor() {
    super(403, 'You cannot delete your own account');
  }
}

export class CannotDemoteSelf extends AppError {
  constructor() {
    super(403, 'You cannot remove your own admin rights');
  }
}

export class AvatarNotFound extends AppError {
  constructor() {
    super(404, 'Avatar not found');
  }
}

export class NotMultipart extends AppError {
  constructor() {
    super(415, 'Unsupported content type');
  }
}

export class NoFileUploaded extends ValidationFailed {
  constructor() {
    super('No file uploaded');
  }
}

export class TooManyFiles extends ValidationFailed {
  constructor() {
    super('Only one file may be uploaded');
  }
}

export class UnsupportedFileType extends AppError {
  constructor() {
    super(415, 'Unsupported file type');
  }
}

export class FileTooLarge extends AppError {
  constructor() {
    super(413, 'File too large');
  }
}

/** A multipart body that breaks off or does not parse (missing boundary, truncated part). */
export class MalformedMultipart extends ValidationFailed {
  constructor() {
    super('Malformed multipart body');
  }
}

/** More parts than the service reads in one upload. */
export class TooManyParts extends AppError {
  constructor() {
    super(413, 'Request body too large');
  }
}
