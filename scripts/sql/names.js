// Names for the `$n` parameters of a recorded statement: the path, within the method's named arguments, of the
// value it was given (`filter.paging.perPage`), found by comparing values. The examples use distinct values so
// that each parameter matches one path; one that matches none or several stops the generator, and the example
// then names it (`extra`) or changes its values.

/** The placeholder an example puts where the method takes the transaction's EntityManager. */
export const TX = Symbol('transaction');

/** The placeholder an example puts where the method takes an export's snapshot (database/query-stream.ts). */
export const SNAPSHOT = Symbol('snapshot');

/** @param {unknown} value */
const isPlainObject = (value) =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  !(value instanceof Date) &&
  Object.getPrototypeOf(value) === Object.prototype;

/** A value's canonical text: equal texts are equal values (a Date compares as its ISO text). */
export const canonical = (/** @type {unknown} */ value) =>
  value === undefined ? 'undefined' : JSON.stringify(value);

/**
 * Every (path, value) under the named arguments: each argument, each property of a plain object, and for an
 * array of plain objects each property across the items (`writes[].userId`).
 * @param {Record<string, unknown>} named
 * @returns {{ path: string, value: unknown }[]}
 */
function paths(named) {
  /** @type {{ path: string, value: unknown }[]} */
  const found = [];
  /** @param {unknown} value @param {string} at */
  const walk = (value, at) => {
    if (value === undefined || value === TX || value === SNAPSHOT) return;
    found.push({ path: at, value });
    if (isPlainObject(value)) {
      for (const [key, inner] of Object.entries(/** @type {Record<string, unknown>} */ (value)))
        walk(inner, `${at}.${key}`);
    } else if (Array.isArray(value) && value.length > 0 && value.every(isPlainObject)) {
      const items = /** @type {Record<string, unknown>[]} */ (value);
      const keys = [...new Set(items.flatMap((item) => Object.keys(item)))];
      for (const key of keys)
        walk(
          items.map((item) => item[key]),
          `${at}[].${key}`,
        );
    }
  };
  for (const [name, value] of Object.entries(named)) walk(value, name);
  return found;
}

/** @param {string} text */
const contains = (text) => `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

/**
 * How a method may turn an argument into a parameter, tried in this order after the value itself.
 * @type {{ note: string, apply: (value: unknown) => unknown }[]}
 */
const DERIVED = [
  {
    note: 'as a contains pattern',
    apply: (value) => (typeof value === 'string' ? contains(value) : undefined),
  },
  {
    note: 'lower-cased',
    apply: (value) =>
      typeof value === 'string'
        ? value.toLowerCase()
        : Array.isArray(value) && value.every((item) => typeof item === 'string')
          ? value.map((item) => item.toLowerCase())
          : undefined,
  },
  {
    note: 'as JSON',
    apply: (value) => (isPlainObject(value) || Array.isArray(value) ? JSON.stringify(value) : undefined),
  },
  {
    note: 'as text',
    apply: (value) => (typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined),
  },
];

/**
 * The name of each parameter of `values`.
 * @param {unknown[]} values the statement's parameters
 * @param {Record<string, unknown>} named the method's arguments by parameter name
 * @param {Record<string, unknown>} extra values the example names itself (constants, derived values), by name
 * @returns {{ names: string[], problems: string[] }}
 */
export function nameParameters(values, named, extra) {
  const candidates = paths(named);
  const extras = Object.entries(extra).map(([path, value]) => ({ path, value }));
  /** @type {string[]} */
  const names = [];
  /** @type {string[]} */
  const problems = [];
  values.forEach((value, index) => {
    const text = canonical(value);
    /** @type {string[][]} */
    const tiers = [
      extras.filter((c) => canonical(c.value) === text).map((c) => c.path),
      candidates.filter((c) => canonical(c.value) === text).map((c) => c.path),
      ...DERIVED.map((derived) =>
        candidates
          .filter((c) => {
            const result = derived.apply(c.value);
            return result !== undefined && canonical(result) === text;
          })
          .map((c) => `${c.path} (${derived.note})`),
      ),
    ];
    const tier = tiers.find((matches) => matches.length > 0);
    if (tier === undefined) {
      problems.push(`$${index + 1} = ${text} matches no argument`);
      names.push('?');
    } else if (tier.length > 1) {
      problems.push(`$${index + 1} = ${text} matches ${tier.join(', ')}`);
      names.push('?');
    } else {
      names.push(tier[0]);
    }
  });
  return { names, problems };
}
