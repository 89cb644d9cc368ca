import { QueryFailedError } from 'typeorm';
import { type Paging, type SortKey } from '../core/query.js';

/**
 * The shared pieces of the hand-written SQL in the repositories. Statements are built from validated input
 * only: sort expressions come from a whitelist, values are always parameters.
 */

/** Numbered placeholders for SQL assembled from optional parts: `params.add(value)` returns `$n`. */
export class SqlParams {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** A statement and its parameters. */
export interface SqlQuery {
  sql: string;
  params: unknown[];
}

/** `WHERE a AND b`, or nothing when there are no conditions. */
export function whereClause(conditions: readonly string[]): string {
  return conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
}

/** `ORDER BY` text for the keys, nulls last both ways, always ending with `<idColumn>` ascending. */
export function orderByClause(keys: readonly SortKey[], idColumn: string): string {
  const parts = keys.map((key) => `${key.column} ${key.descending ? 'DESC' : 'ASC'} NULLS LAST`);
  return [...parts, `${idColumn} ASC`].join(', ');
}

/** `timestamptz` as `Date.prototype.toISOString()` writes it (milliseconds, `Z`), for JSON text built in SQL. */
export const isoTimestampText = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The JSON text of one row of a wire shape, byte for byte as `JSON.stringify` writes the mapper's object: a
 * `row_to_json` sub-select whose items are the fields' SQL expressions in the fields' order, each named by its
 * field (an expression that is a column of that name stands as it is). `expressions` is declared
 * `satisfies PerField<Shape, string>` beside it (core/wire-shape.ts), so it holds exactly the shape's fields.
 */
export function rowJsonText<K extends string>(
  fields: readonly K[],
  expressions: Readonly<Record<K, string>>,
): string {
  const items = fields.map((field) => {
    const expression = expressions[field];
    return expression.endsWith(`.${field}`) ? expression : `${expression} AS ${field}`;
  });
  return `(SELECT row_to_json(x)::text FROM (\n    SELECT ${items.join(', ')}) x)`;
}

/** `json_build_object`'s arguments for a wire shape: each field's name and SQL expression, in the fields' order. */
export function jsonObjectArguments<K extends string>(
  fields: readonly K[],
  expressions: Readonly<Record<K, string>>,
  indent = ' ',
): string {
  return fields.map((field) => `'${field}', ${expressions[field]}`).join(`,\n${indent}`);
}

/** SQL select items aliasing columns to a mapper's source properties: `{prop: 'u.col'}` → `u.col AS "prop"`. */
export function aliasedColumns<K extends string>(columns: Readonly<Record<K, string>>): string {
  return Object.entries<string>(columns)
    .map(([property, column]) =>
      column === property || column.endsWith(`.${property}`) ? column : `${column} AS "${property}"`,
    )
    .join(', ');
}

/** A `LIKE`/`ILIKE` pattern matching `text` as a literal substring (`%`, `_` and `\` match themselves). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/**
 * Page plus total in one statement: the count and the page are planned separately (an aggregate over the
 * matches, a LIMIT over an index) and joined, so an empty page past the end still carries the total. One row
 * per item, each carrying `total`; a single row with null columns when the page is empty. `select` is what each
 * row carries of the page (`page.*` unless given): an expression over `page` is computed for the page's rows only.
 */
export function pageWithTotal(
  params: SqlParams,
  from: string,
  where: string,
  columns: string,
  orderBy: string,
  paging: Paging,
  select = 'page.*',
): string {
  return `SELECT total.n AS total, ${select}
  FROM (SELECT count(*) AS n ${from} ${where}) total
  LEFT JOIN LATERAL (
    SELECT ${columns}
    ${from}
    ${where}
    ORDER BY ${orderBy}
    LIMIT ${params.add(paging.perPage)} OFFSET ${params.add(paging.offset)}
  ) page ON true`;
}

/** A row of a paged query: the item's columns (all null when the page is empty) and the total. */
export type PageRow<T> = T & { total: number | string };

/** One page of items and the number of all matches. */
export interface Page<T> {
  items: T[];
  total: number;
}

/** The page's items and the total from the rows of a paged query. */
export function splitPage<T extends { id: unknown }>(rows: readonly PageRow<T>[]): Page<T> {
  return { items: rows.filter((row) => row.id !== null), total: Number(rows[0]?.total ?? 0) };
}

/** The constraint or unique index a PostgreSQL unique violation (23505) names, if `error` is one. */
export function violatedUniqueConstraint(error: unknown): string | undefined {
  if (!(error instanceof QueryFailedError)) return undefined;
  const driver = error.driverError as { code?: unknown; constraint?: unknown };
  return driver.code === '23505' && typeof driver.constraint === 'string' ? driver.constraint : undefined;
}

/**
 * SQLSTATE classes in which PostgreSQL did not run the statement to its end for reasons of its own state, not
 * the statement's: connection exceptions, insufficient resources, operator intervention (statement timeouts,
 * cancels, shutdowns) and system errors. Running the statement again would wait on the same cause.
 */
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58']);

/**
 * Whether PostgreSQL ran `error`'s statement and rejected it for what it asked (a missing table, a permission,
 * bad data): an error with a SQLSTATE outside UNAVAILABLE_CLASSES. Connection failures and the client's own
 * time bound carry no SQLSTATE.
 */
export function isStatementError(error: unknown): boolean {
  const driver = error instanceof QueryFailedError ? (error.driverError as unknown) : error;
  const code = (driver as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !UNAVAILABLE_CLASSES.has(code.slice(0, 2));
}
