import { DataSource } from 'typeorm';
import { BATCH_TIMEOUTS, dataSourceOptions } from '../../ormconfig.js';
import { type EmbeddedDatabase, startEmbeddedPostgres } from './embedded-postgres.js';

interface Logger {
  log(message: string): void;
  error(message: string): void;
}

/** DATABASE_URL's server when set, else an embedded PostgreSQL under the data directory. */
export async function provideDatabase(
  databaseUrl: string | undefined,
  dataDir: string,
  logger: Logger,
): Promise<EmbeddedDatabase> {
  if (databaseUrl !== undefined) return { url: databaseUrl, stop: () => Promise.resolve() };
  return startEmbeddedPostgres(dataDir, logger);
}

/** Arbitrary, fixed: instances starting together run migrations one after the other. */
const MIGRATION_LOCK = 7_240_000;

/** Applies pending migrations under an advisory lock, on one connection of its own. */
export async function runMigrations(url: string): Promise<string[]> {
  const dataSource = new DataSource({ ...dataSourceOptions(url, 1, BATCH_TIMEOUTS), logging: false });
  await dataSource.initialize();
  try {
    await dataSource.query(`SELECT pg_advisory_lock($1)`, [MIGRATION_LOCK]);
    const applied = await dataSource.runMigrations({ transaction: 'all' });
    await dataSource.query(`SELECT pg_advisory_unlock($1)`, [MIGRATION_LOCK]);
    return applied.map((migration) => migration.name);
  } finally {
    await dataSource.destroy();
  }
}
