/** The user field rules of docs/api.md §5, shared by the user DTOs (which the CLI validates with too) and password change. */
export const USERNAME_PATTERN = /^[A-Za-z0-9._-]{3,64}$/;
export const USERNAME_MESSAGE = "Username must be 3-64 characters of letters, digits, '.', '_' or '-'";
export const EMAIL_MESSAGE = 'Email must be a valid email address';
/**
 * class-validator's `isEmail` options: a domain of one label is an address too, as the first administrator's
 * default `admin@localhost` (ADMIN_EMAIL) is.
 */
export const EMAIL_OPTIONS = { require_tld: false } as const;
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
