import type pg from 'pg';
import { type DataSource } from 'typeorm';

/** The service's request pool: node-postgres' Pool that TypeORM's PostgreSQL driver keeps as `master`. */
export function poolOf(dataSource: DataSource): pg.Pool {
  const { master } = dataSource.driver as { master?: pg.Pool };
  if (master === undefined)
    throw new Error('the data source has no pool (not initialized, or not PostgreSQL)');
  return master;
}
