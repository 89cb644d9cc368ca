import { DataSource, type DataSourceOptions } from 'typeorm';
import { DEFAULT_LONG_TIMEOUTS, type DatabaseTimeouts, dataSourceOptions } from '../../ormconfig.js';
import { type AppConfig } from '../config/app-config.js';
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

/** The bounds of interactive requests, from the settings. */
export function interactiveTimeouts(config: AppConfig): DatabaseTimeouts {
  return {
    statementMs: config.dbStatementTimeoutMs,
    queryMs: config.dbQueryTimeoutMs,
    connectMs: config.dbConnectTimeoutMs,
  };
}

/**
 * The request pool's data source: the one description of the database (`dataSourceOptions`), with the pool size
 * and the interactive bounds from the settings. Migrations ran before it is built (see runMigrations).
 */
export function requestPoolOptions(config: AppConfig & { databaseUrl: string }): DataSourceOptions {
  return {
    ...dataSourceOptions(config.databaseUrl, config.dbPoolSize, interactiveTimeouts(config)),
    migrationsRun: false,
  };
}

/** The bounds of long-running work (migrations, the demo generator, imports, exports, rollover). */
export function longTimeouts(config: AppConfig): DatabaseTimeouts {
  return {
    statementMs: config.dbLongStatementTimeoutMs,
    queryMs: config.dbLongQueryTimeoutMs,
    connectMs: config.dbConnectTimeoutMs,
  };
}

/**
 * Runs `work` while holding the session advisory lock `key` on a connection of `dataSource`'s pool, so that
 * replicas doing the same (creating something at start) take turns. `work` may use other connections.
 */
export async function withAdvisoryLock<T>(
  dataSource: DataSource,
  key: number,
  work: () => Promise<T>,
): Promise<T> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query(`SELECT pg_advisory_lock($1)`, [key]);
    try {
      return await work();
    } finally {
      await runner.query(`SELECT pg_advisory_unlock($1)`, [key]);
    }
  } finally {
    await runner.release();
  }
}

/** Arbitrary, fixed: instances starting together run migrations one after the other. */
const MIGRATION_LOCK = 7_240_000;

/** Applies pending migrations under an advisory lock, on one connection of its own, with the long bounds. */
export async function runMigrations(
  url: string,
  timeouts: DatabaseTimeouts = DEFAULT_LONG_TIMEOUTS,
): Promise<string[]> {
  const dataSource = new DataSource({ ...dataSourceOptions(url, 1, timeouts), logging: false });
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
