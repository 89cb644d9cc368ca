import { invalidPath, invalidSyntax, invalidValue, noTarget } from './scim.errors.js';
import { parsePath, type ScimPath } from './scim-path.js';
import {
  EMAIL_REQUIRED_MESSAGE,
  member,
  readActive,
  readDisplayName,
  readEmails,
  readEmailValue,
  readExternalId,
  readFamilyName,
  readGivenName,
  readUserName,
  type ScimUserFields,
  USERNAME_REQUIRED_MESSAGE,
} from './scim-user.js';

export type PatchOp = 'add' | 'replace' | 'remove';

export interface PatchOperation {
  op: PatchOp;
  path: ScimPath | undefined;
  value: unknown;
}

export const OPERATIONS_MAX = 100;
export const OPERATIONS_MESSAGE = `Operations must be an array of 1-${OPERATIONS_MAX} operations`;
export const ACTIVE_REMOVE_MESSAGE = 'active cannot be removed';
export const PATHLESS_VALUE_MESSAGE =
  'An operation without a path needs an object of attributes as its value';
export const REMOVE_NEEDS_PATH_MESSAGE = 'A remove operation needs a path';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The operations of a PATCH body (RFC 7644 §3.5.2): `op` in any case (Entra ID writes `Replace`), paths parsed.
 * A missing or empty `Operations` or an unknown `op` → 400 `invalidSyntax`; a path that does not parse → 400
 * `invalidPath`.
 */
export function readPatchBody(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw invalidSyntax('The request body must be a JSON object');
  const operations = member(body, 'Operations');
  if (!Array.isArray(operations) || operations.length === 0 || operations.length > OPERATIONS_MAX)
    throw invalidSyntax(OPERATIONS_MESSAGE);
  return operations.map((operation): PatchOperation => {
    if (!isObject(operation)) throw invalidSyntax('Each operation must be an object with an op');
    const op = member(operation, 'op');
    const lower = typeof op === 'string' ? op.toLowerCase() : undefined;
    if (lower !== 'add' && lower !== 'replace' && lower !== 'remove')
      throw invalidSyntax(`Unknown op ${JSON.stringify(op ?? null)}: use add, replace or remove`);
    const rawPath = member(operation, 'path');
    if (rawPath !== undefined && rawPath !== null && typeof rawPath !== 'string')
      throw invalidPath('path must be a string');
    const path = typeof rawPath === 'string' && rawPath.trim() !== '' ? parsePath(rawPath) : undefined;
    const value = member(operation, 'value');
    if (path === undefined && lower === 'remove') throw noTarget(REMOVE_NEEDS_PATH_MESSAGE);
    if (path === undefined && !isObject(value)) throw invalidValue(PATHLESS_VALUE_MESSAGE);
    return { op: lower, path, value };
  });
}

/**
 * The user's fields after every operation, in order; the input is not changed. Values are checked as on
 * create; paths this service does not keep (`title`, an extension's attribute, `emails[type eq "home"].value`)
 * change nothing. Path-less operations take an object whose keys are paths themselves: plain (`active`,
 * Okta), dotted (`name.givenName`, Entra ID) or with a value filter, and whose values may be nested objects
 * (`{"name": {"givenName": …}}`).
 */
export function applyPatch(fields: ScimUserFields, operations: readonly PatchOperation[]): ScimUserFields {
  const next = { ...fields };
  for (const { op, path, value } of operations) {
    if (path !== undefined) {
      applyAt(next, op, path, value);
      continue;
    }
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      // `schemas` and the like in a path-less value object are not attributes of the user.
      if (key.toLowerCase() === 'schemas' || key.toLowerCase() === 'meta' || key.toLowerCase() === 'id')
        continue;
      applyAt(next, op, parsePath(key), item);
    }
  }
  return next;
}

/** Whether a value filter inside `emails[…]` picks the one address a user has (type work, primary). */
function picksTheEmail(path: ScimPath): boolean {
  return (path.filter ?? []).every(({ attribute, operator, value }) => {
    if (operator !== 'eq') return false;
    if (attribute === 'type') return typeof value === 'string' && value.toLowerCase() === 'work';
    if (attribute === 'primary')
      return value === true || (typeof value === 'string' && value.toLowerCase() === 'true');
    if (attribute === 'value') return typeof value === 'string';
    return false;
  });
}

function applyName(next: ScimUserFields, op: PatchOp, sub: string | undefined, value: unknown): void {
  if (sub === undefined) {
    if (op === 'remove') {
      next.givenName = null;
      next.familyName = null;
      return;
    }
    if (value === null) {
      next.givenName = null;
      next.familyName = null;
      return;
    }
    if (!isObject(value)) throw invalidValue('name must be an object with givenName and familyName');
    // Sub-attributes not given stay as they are (RFC 7644 §3.5.2.3).
    for (const [key, item] of Object.entries(value)) applyName(next, op, key.toLowerCase(), item);
    return;
  }
  const given = op === 'remove' ? null : value;
  if (sub === 'givenname') next.givenName = readGivenName(given);
  else if (sub === 'familyname') next.familyName = readFamilyName(given);
  // `formatted`, `middleName`, `honorificPrefix`…: not kept.
}

function applyAt(next: ScimUserFields, op: PatchOp, path: ScimPath, value: unknown): void {
  if (path.extension) return;
  const { attribute, subAttribute, filter } = path;
  const removing = op === 'remove';
  switch (attribute) {
    case 'username':
      if (subAttribute !== undefined || filter) return;
      if (removing) throw invalidValue(USERNAME_REQUIRED_MESSAGE);
      next.userName = readUserName(value);
      return;
    case 'displayname':
      if (subAttribute !== undefined || filter) return;
      next.displayName = removing ? null : readDisplayName(value);
      return;
    case 'externalid':
      if (subAttribute !== undefined || filter) return;
      next.externalId = removing ? null : readExternalId(value);
      return;
    case 'active':
      if (subAttribute !== undefined || filter) return;
      if (removing) throw invalidValue(ACTIVE_REMOVE_MESSAGE);
      next.active = readActive(value);
      return;
    case 'name':
      if (filter) return;
      applyName(next, op, subAttribute, value);
      return;
    case 'emails':
      applyEmails(next, op, path, value);
      return;
    default:
      // Another attribute of the schema (title, phoneNumbers, addresses…) or an unknown one: not kept.
      return;
  }
}

/** An entry of `emails` marked primary or of type work. */
function isMainEmail(entry: unknown): boolean {
  if (!isObject(entry)) return false;
  const primary = member(entry, 'primary');
  const type = member(entry, 'type');
  return (
    primary === true ||
    (typeof primary === 'string' && primary.toLowerCase() === 'true') ||
    (typeof type === 'string' && type.toLowerCase() === 'work')
  );
}

function applyEmails(next: ScimUserFields, op: PatchOp, path: ScimPath, value: unknown): void {
  const { subAttribute, filter } = path;
  if (filter === undefined) {
    if (subAttribute === undefined) {
      if (op === 'remove') throw invalidValue(EMAIL_REQUIRED_MESSAGE);
      const values = Array.isArray(value) ? value : [value];
      // `add` appends to a list the service keeps one address of: an added address replaces it only when it is
      // the primary or the work one (an added home address changes nothing).
      if (op === 'add' && !values.some(isMainEmail)) return;
      next.email = readEmails(values);
      return;
    }
    if (subAttribute !== 'value') return;
    if (op === 'remove') throw invalidValue(EMAIL_REQUIRED_MESSAGE);
    next.email = readEmailValue(value);
    return;
  }
  if (!picksTheEmail(path)) return;
  if (subAttribute === undefined) {
    if (op === 'remove') throw invalidValue(EMAIL_REQUIRED_MESSAGE);
    next.email = readEmails([value]);
    return;
  }
  if (subAttribute !== 'value') return;
  if (op === 'remove') throw invalidValue(EMAIL_REQUIRED_MESSAGE);
  next.email = readEmailValue(value);
}
