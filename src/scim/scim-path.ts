import { invalidPath } from './scim.errors.js';

/** The core User schema's URN: attribute paths may carry it as a prefix (RFC 7644 §3.10). */
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';

/** One comparison inside a value filter: `type eq "work"`, `primary eq true`. */
export interface ValueComparison {
  /** Lower-case. */
  attribute: string;
  /** Lower-case: eq, ne, co, sw, ew, gt, ge, lt, le, pr. */
  operator: string;
  value: unknown;
}

/**
 * An attribute path, names lower-cased (SCIM attribute names are case-insensitive): `name.givenName` is
 * `{attribute: 'name', subAttribute: 'givenname'}`, `emails[type eq "work"].value` carries the filter. An
 * extension schema's attribute (`urn:…:enterprise:2.0:User:department`) is `{attribute: '', extension: true}`.
 */
export interface ScimPath {
  attribute: string;
  subAttribute?: string;
  filter?: ValueComparison[];
  extension?: boolean;
}

const NAME = /^[A-Za-z][A-Za-z0-9_$-]*$/;
const OPERATORS = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']);

/**
 * A comparison value as SCIM writes it: a JSON string, `true`, `false`, `null` or a JSON number; `rest` is the
 * text after it. Undefined when the text does not start with one.
 */
export function readCompValue(text: string): { value: unknown; rest: string } | undefined {
  if (text.startsWith('"')) {
    let end = 1;
    while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
    if (end >= text.length) return undefined;
    try {
      return { value: JSON.parse(text.slice(0, end + 1)) as unknown, rest: text.slice(end + 1) };
    } catch {
      return undefined;
    }
  }
  const match = /^(true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?=\s|\]|$)/i.exec(text);
  if (!match) return undefined;
  return { value: JSON.parse(match[1].toLowerCase()) as unknown, rest: text.slice(match[1].length) };
}

/** `attr op value` or `attr pr`, joined by `and` (the value filters IdPs put in PATCH paths). */
function parseValueFilter(text: string): ValueComparison[] | undefined {
  const comparisons: ValueComparison[] = [];
  let rest = text.trim();
  for (;;) {
    const head = /^([A-Za-z][A-Za-z0-9_$-]*)\s+([A-Za-z]{2})(?=\s|$)/.exec(rest);
    if (!head) return undefined;
    const attribute = head[1].toLowerCase();
    const operator = head[2].toLowerCase();
    rest = rest.slice(head[0].length).trimStart();
    if (operator === 'pr') {
      comparisons.push({ attribute, operator, value: undefined });
    } else {
      if (!OPERATORS.has(operator)) return undefined;
      const read = readCompValue(rest);
      if (!read) return undefined;
      comparisons.push({ attribute, operator, value: read.value });
      rest = read.rest.trimStart();
    }
    if (rest === '') return comparisons;
    const joiner = /^and\s+/i.exec(rest);
    if (!joiner) return undefined;
    rest = rest.slice(joiner[0].length);
  }
}

/**
 * Parses a PATCH path or a filter's attribute: `attr`, `attr.sub`, `attr[filter]`, `attr[filter].sub`, each
 * optionally after the User schema's URN; an extension schema's URN with its attribute is valid too. Anything
 * else → 400 `invalidPath`.
 */
export function parsePath(text: string): ScimPath {
  const fail = () => invalidPath(`The path "${text}" is not a valid attribute path`);
  if (typeof text !== 'string' || text.length === 0 || text.length > 512) throw fail();
  let rest = text.trim();
  if (/^urn:/i.test(rest)) {
    if (rest.toLowerCase().startsWith(`${USER_SCHEMA.toLowerCase()}:`)) {
      rest = rest.slice(USER_SCHEMA.length + 1);
    } else {
      // Another schema (an enterprise extension): valid when it names an attribute after the URN.
      if (!/^urn:[A-Za-z0-9._:-]+:[A-Za-z][A-Za-z0-9_$.-]*$/i.test(rest)) throw fail();
      return { attribute: '', extension: true };
    }
  }
  const bracket = rest.indexOf('[');
  let filter: ValueComparison[] | undefined;
  let head = rest;
  let tail = '';
  if (bracket >= 0) {
    const close = rest.lastIndexOf(']');
    if (close < bracket) throw fail();
    head = rest.slice(0, bracket);
    filter = parseValueFilter(rest.slice(bracket + 1, close));
    if (!filter) throw fail();
    tail = rest.slice(close + 1);
    if (tail !== '' && !/^\.[A-Za-z][A-Za-z0-9_$-]*$/.test(tail)) throw fail();
    if (!NAME.test(head)) throw fail();
    return {
      attribute: head.toLowerCase(),
      subAttribute: tail ? tail.slice(1).toLowerCase() : undefined,
      filter,
    };
  }
  const parts = head.split('.');
  if (parts.length > 2 || !parts.every((part) => NAME.test(part))) throw fail();
  return { attribute: parts[0].toLowerCase(), subAttribute: parts[1]?.toLowerCase() };
}
