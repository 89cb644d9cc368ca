import { invalidFilter } from './scim.errors.js';
import { parsePath, readCompValue, type ScimPath } from './scim-path.js';

/** What `GET /Users?filter=` may compare (docs/api.md §14). */
export type FilterAttribute = 'userName' | 'externalId' | 'id' | 'email';

export interface FilterCondition {
  attribute: FilterAttribute;
  value: string;
}

export const INVALID_FILTER_MESSAGE =
  'The filter must be eq comparisons of userName, externalId, id, emails.value or emails[type eq "work"].value ' +
  'with string values, joined by and';

/** Any control character (Unicode Cc: C0, DEL, C1). */
const CONTROL = /\p{Cc}/u;

/** The attribute a supported filter path names, or undefined. */
function filterAttribute(path: ScimPath): FilterAttribute | undefined {
  const { attribute, subAttribute, filter } = path;
  if (filter === undefined) {
    if (subAttribute === undefined) {
      if (attribute === 'username') return 'userName';
      if (attribute === 'externalid') return 'externalId';
      if (attribute === 'id') return 'id';
      return undefined;
    }
    return attribute === 'emails' && subAttribute === 'value' ? 'email' : undefined;
  }
  const [only] = filter;
  const workEmail =
    attribute === 'emails' &&
    subAttribute === 'value' &&
    filter.length === 1 &&
    only.attribute === 'type' &&
    only.operator === 'eq' &&
    typeof only.value === 'string' &&
    only.value.toLowerCase() === 'work';
  return workEmail ? 'email' : undefined;
}

/**
 * Parses the supported filter grammar exactly: `<path> eq "<string>"` terms joined by `and`, attribute names and
 * operators in any case. Anything else (another operator, `or`, parentheses, `not`, a non-string value) → 400
 * `invalidFilter`; the caller never gets a partial filter.
 */
export function parseFilter(text: string): FilterCondition[] {
  const conditions: FilterCondition[] = [];
  let rest = text.trim();
  if (rest === '' || text.length > 2048 || CONTROL.test(text)) throw invalidFilter(INVALID_FILTER_MESSAGE);
  for (;;) {
    // The path runs to the first space outside brackets.
    let end = 0;
    let depth = 0;
    while (end < rest.length && (depth > 0 || !/\s/.test(rest[end]))) {
      if (rest[end] === '[') depth++;
      else if (rest[end] === ']') depth--;
      else if (rest[end] === '"' && depth > 0) {
        end++;
        while (end < rest.length && rest[end] !== '"') end += rest[end] === '\\' ? 2 : 1;
      }
      end++;
    }
    let path: ScimPath;
    try {
      path = parsePath(rest.slice(0, end));
    } catch {
      throw invalidFilter(INVALID_FILTER_MESSAGE);
    }
    const attribute = filterAttribute(path);
    rest = rest.slice(end).trimStart();
    const operator = /^eq\s+/i.exec(rest);
    if (attribute === undefined || !operator) throw invalidFilter(INVALID_FILTER_MESSAGE);
    const read = readCompValue(rest.slice(operator[0].length));
    // A control character, written or escaped (`\u0000`), is no one's name, and PostgreSQL refuses a NUL.
    if (!read || typeof read.value !== 'string' || CONTROL.test(read.value))
      throw invalidFilter(INVALID_FILTER_MESSAGE);
    conditions.push({ attribute, value: read.value });
    rest = read.rest;
    if (rest.trim() === '') return conditions;
    const joiner = /^\s+and\s+/i.exec(rest);
    if (!joiner) throw invalidFilter(INVALID_FILTER_MESSAGE);
    rest = rest.slice(joiner[0].length);
  }
}
