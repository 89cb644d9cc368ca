import { isEmail } from 'class-validator';
/** The user field rules of docs/api.md §5 and §14, shared by the user DTOs (which the CLI validates with too), CSV import and password change. */
export const USERNAME_MAX = 128;
/** ASCII only: no Unicode case folding can ever join two names (docs/api.md §11). `@` and `+` for IdP names. */
export const USERNAME_PATTERN = /^[A-Za-z0-9._@+-]{3,128}$/;
export const USERNAME_MESSAGE =
  "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'";
export const EMAIL_MESSAGE = 'Email must be a valid email address';
/**
 * class-validator's `isEmail` options: a domain of one label is an address too, as the first administrator's
 * default `admin@localhost` (ADMIN_EMAIL) is.
 */
export const EMAIL_OPTIONS = { require_tld: false } as const;
/** The one email rule of every way a user is written (the user routes' DTOs, CSV import, SCIM, single sign-on). */
export const isUserEmail = (value: unknown): value is string =>
  typeof value === 'string' && isEmail(value, EMAIL_OPTIONS);
/**
 * The OpenAPI schema of an email: not `format: email`, which validators read as a domain with a dot and would
 * refuse `admin@localhost`; the pattern is the shape every address the service keeps has.
 */
export const EMAIL_SCHEMA = {
  type: 'string',
  pattern: '^[^@\\s]+@[^@\\s]+$',
  description: 'An email address; the domain may be one label (`admin@localhost`).',
} as const;
export const PASSWORD_MESSAGE = 'Password must be 8-128 characters';
export const ADMIN_MESSAGE = 'admin must be a boolean';
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;
export const BULK_MAX_USERS = 500;
export const BULK_EMPTY_MESSAGE = 'At least one user is required';
export const BULK_TOO_MANY_MESSAGE = `At most ${BULK_MAX_USERS} users are allowed per request`;

/** §14's fields. */
export const NAME_MAX = 100;
export const DISPLAY_NAME_MAX = 200;
export const EXTERNAL_ID_MAX = 255;
export const GIVEN_NAME_MESSAGE = `given_name must be at most ${NAME_MAX} characters`;
export const FAMILY_NAME_MESSAGE = `family_name must be at most ${NAME_MAX} characters`;
export const DISPLAY_NAME_MESSAGE = `display_name must be at most ${DISPLAY_NAME_MAX} characters`;
export const EXTERNAL_ID_MESSAGE = `external_id must be 1-${EXTERNAL_ID_MAX} characters`;
export const ACTIVE_MESSAGE = 'active must be a boolean';
