import { AppError } from '../core/errors.js';

export class InvalidCredentials extends AppError {
  constructor() {
    super(401, 'Invalid username or password');
  }
}

export class TooManyLoginAttempts extends AppError {
  constructor() {
    super(429, 'Too many requests, try again later');
  }
}

export class WrongCurrentPassword extends AppError {
  constructor() {
    super(401, 'Current password is incorrect');
  }
}

/** An IdP token whose person has no local user, and none may be created (docs/sso.md). */
export class NoAccountForIdentity extends AppError {
  constructor() {
    super(403, 'No account for this identity');
  }
}

export class PasswordLoginDisabled extends AppError {
  constructor() {
    super(403, 'Password login is disabled; use single sign-on');
  }
}

/** A password change for a user created by single sign-on, who has no password. */
export class SingleSignOnAccount extends AppError {
  constructor() {
    super(400, 'This account signs in with single sign-on');
  }
}
