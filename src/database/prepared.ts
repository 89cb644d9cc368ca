import type pg from 'pg';
import { type DataSource } from 'typeorm';

/** More distinct statements than this run unnamed: list shapes vary with filters and sort keys. */
const MAX_NAMED = 200;
const names = new Map<string, string>();

/**
 * A statement run as a named prepared statement on the data source's own `pg` pool: each
 * connection parses and plans it once (plans of the module read cost more than running it; docs/performance.md).
 * Rows come back as TypeORM's `query()` returns them (same pool, same type parsers). Not for statements inside
 * a transaction, which run on the transaction's query runner. `name: false` runs a statement unnamed unless it
 * already has a name: for shapes a client can vary at will (a list sorted on several keys), which would
 * otherwise take the named slots of the common ones.
 */
export async function preparedQuery<T>(
  dataSource: DataSource,
  sql: string,
  params: unknown[],
  { name: nameIt = true }: { name?: boolean } = {},
): Promise<T[]> {
  let name = names.get(sql);
  if (name === undefined && nameIt && names.size < MAX_NAMED) {
    name = `mas_${names.size}`;
    names.set(sql, name);
  }
  const pool = (dataSource.driver as unknown as { master: pg.Pool }).master;
  const result = await pool.query({ name, text: sql, values: params });
  return result.rows as T[];
}
