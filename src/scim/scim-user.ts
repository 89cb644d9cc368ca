import { type UserSummarySource } from '../users/user.mapper.js';
import { EMAIL_MESSAGE, isUserEmail, USERNAME_MESSAGE, USERNAME_PATTERN } from '../users/user-rules.js';
import { invalidSyntax, invalidValue } from './scim.errors.js';
import { USER_SCHEMA } from './scim-path.js';

/** The fields SCIM manages of a user (docs/api.md §14); the rest (admin, password, avatar) it never touches. */
export interface ScimUserFields {
  userName: string;
  /** Lower-case. */
  email: string;
  givenName: string | null;
  familyName: string | null;
  displayName: string | null;
  externalId: string | null;
  active: boolean;
}

export const USERNAME_REQUIRED_MESSAGE = 'userName is required';
export const EMAIL_REQUIRED_MESSAGE = 'A user needs an email address (emails[].value)';
export const GIVEN_NAME_MESSAGE = 'name.givenName must be a string of at most 100 characters';
export const FAMILY_NAME_MESSAGE = 'name.familyName must be a string of at most 100 characters';
export const DISPLAY_NAME_MESSAGE = 'displayName must be a string of at most 200 characters';
export const EXTERNAL_ID_MESSAGE = 'externalId must be a string of 1-255 characters';
export const ACTIVE_MESSAGE = 'active must be a boolean';
export const NOT_AN_OBJECT_MESSAGE = 'The request body must be a JSON object';

const length = (text: string) => [...text].length;
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A member of an object by SCIM's case-insensitive attribute name. */
export function member(object: Record<string, unknown>, name: string): unknown {
  const lower = name.toLowerCase();
  for (const key of Object.keys(object)) if (key.toLowerCase() === lower) return object[key];
  return undefined;
}

export function readUserName(value: unknown): string {
  if (value === undefined || value === null || value === '') throw invalidValue(USERNAME_REQUIRED_MESSAGE);
  if (typeof value !== 'string' || !USERNAME_PATTERN.test(value)) throw invalidValue(USERNAME_MESSAGE);
  return value;
}

/** An optional text: null when absent or null; else a string of at most `max` (at least `min`) characters. */
function optionalText(value: unknown, max: number, message: string, min = 0): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || length(value) < min || length(value) > max || value.includes('\u0000'))
    throw invalidValue(message);
  return value;
}

export const readGivenName = (value: unknown) => optionalText(value, 100, GIVEN_NAME_MESSAGE);
export const readFamilyName = (value: unknown) => optionalText(value, 100, FAMILY_NAME_MESSAGE);
export const readDisplayName = (value: unknown) => optionalText(value, 200, DISPLAY_NAME_MESSAGE);
export const readExternalId = (value: unknown) => optionalText(value, 255, EXTERNAL_ID_MESSAGE, 1);

/** A boolean, or Entra ID's strings `"True"` / `"False"` in any case. */
export function readActive(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
  }
  throw invalidValue(ACTIVE_MESSAGE);
}

export function readEmailValue(value: unknown): string {
  if (value === undefined || value === null || value === '') throw invalidValue(EMAIL_REQUIRED_MESSAGE);
  if (!isUserEmail(value)) throw invalidValue(EMAIL_MESSAGE);
  return value.toLowerCase();
}

const isTrue = (value: unknown) =>
  value === true || (typeof value === 'string' && value.toLowerCase() === 'true');

/** The one address a user keeps of `emails`: the `primary` one, else the `type: work` one, else the first. */
export function readEmails(value: unknown): string {
  if (!Array.isArray(value) || value.length === 0) throw invalidValue(EMAIL_REQUIRED_MESSAGE);
  const entries = value.filter(isObject);
  const chosen =
    entries.find((entry) => isTrue(member(entry, 'primary'))) ??
    entries.find((entry) => String(member(entry, 'type')).toLowerCase() === 'work') ??
    entries[0];
  if (chosen === undefined) throw invalidValue(EMAIL_REQUIRED_MESSAGE);
  return readEmailValue(member(chosen, 'value'));
}

/**
 * The fields of a POST or PUT body. Unknown attributes (`password`, `groups`, `roles`, extensions) are ignored;
 * `active` absent is undefined (true on create, unchanged on replace).
 */
export function readUserBody(
  body: unknown,
): Omit<ScimUserFields, 'active'> & { active: boolean | undefined } {
  if (!isObject(body)) throw invalidSyntax(NOT_AN_OBJECT_MESSAGE);
  const userName = readUserName(member(body, 'userName'));
  const name = member(body, 'name');
  if (name !== undefined && name !== null && !isObject(name)) throw invalidValue(GIVEN_NAME_MESSAGE);
  const nameObject = isObject(name) ? name : {};
  const givenName = readGivenName(member(nameObject, 'givenName'));
  const familyName = readFamilyName(member(nameObject, 'familyName'));
  const displayName = readDisplayName(member(body, 'displayName'));
  const externalId = readExternalId(member(body, 'externalId'));
  const activeValue = member(body, 'active');
  const active = activeValue === undefined || activeValue === null ? undefined : readActive(activeValue);
  const email = readEmails(member(body, 'emails'));
  return { userName, email, givenName, familyName, displayName, externalId, active };
}

export const fieldsOf = (user: UserSummarySource): ScimUserFields => ({
  userName: user.username,
  email: user.email,
  givenName: user.givenName,
  familyName: user.familyName,
  displayName: user.displayName,
  externalId: user.externalId,
  active: user.active,
});

/** The SCIM User resource (RFC 7643 §4.1) of a user; null attributes are left out. */
export function toScimUser(user: UserSummarySource, location: string): Record<string, unknown> {
  const resource: Record<string, unknown> = { schemas: [USER_SCHEMA], id: String(user.id) };
  if (user.externalId !== null) resource.externalId = user.externalId;
  resource.userName = user.username;
  if (user.givenName !== null || user.familyName !== null) {
    const name: Record<string, string> = {};
    if (user.givenName !== null) name.givenName = user.givenName;
    if (user.familyName !== null) name.familyName = user.familyName;
    name.formatted = [user.givenName, user.familyName].filter((part) => part !== null).join(' ');
    resource.name = name;
  }
  if (user.displayName !== null) resource.displayName = user.displayName;
  resource.emails = [{ value: user.email, type: 'work', primary: true }];
  resource.active = user.active;
  resource.meta = {
    resourceType: 'User',
    created: user.createdAt.toISOString(),
    lastModified: user.updatedAt.toISOString(),
    location,
  };
  return resource;
}
