import { fixedError } from '../core/errors.js';

export const INVALID_CREDENTIALS_MESSAGE = 'Invalid username or password';

export class InvalidCredentials extends fixedError(401, INVALID_CREDENTIALS_MESSAGE) {}

export const TOO_MANY_LOGINS_MESSAGE = 'Too many requests, try again later';

export class TooManyLoginAttempts extends fixedError(429, TOO_MANY_LOGINS_MESSAGE) {}

export const WRONG_CURRENT_PASSWORD_MESSAGE = 'Current password is incorrect';

export class WrongCurrentPassword extends fixedError(401, WRONG_CURRENT_PASSWORD_MESSAGE) {}

/** An IdP token whose person has no local user, and none may be created (docs/sso.md). */
export class NoAccountForIdentity extends fixedError(403, 'No account for this identity') {}

export const PASSWORD_LOGIN_DISABLED_MESSAGE = 'Password login is disabled; use single sign-on';

export class PasswordLoginDisabled extends fixedError(403, PASSWORD_LOGIN_DISABLED_MESSAGE) {}

export const SINGLE_SIGN_ON_ACCOUNT_MESSAGE = 'This account signs in with single sign-on';

/** A password change for a user created by single sign-on, who has no password. */
export class SingleSignOnAccount extends fixedError(400, SINGLE_SIGN_ON_ACCOUNT_MESSAGE) {}

export const LINK_WITH_PASSWORD_MESSAGE = 'Sign in with your password to link an identity';

/** `POST /api/auth/sso-binding` called with an IdP token: linking needs proof beyond the IdP (docs/sso.md). */
export class LinkWithPassword extends fixedError(403, LINK_WITH_PASSWORD_MESSAGE) {}
