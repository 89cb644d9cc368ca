/** The largest PostgreSQL `bigint`: the bound of every id. */
export const INT64_MAX = 2n ** 63n - 1n;

/** Whether `value` is an integer id within PostgreSQL's `bigint` range (JSON numbers in bodies). */
export function isInt64(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= Number(INT64_MAX);
}
