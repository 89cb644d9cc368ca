import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
// Loaded by Node directly (not through Jest's module mapper), so it uses the build that `pretest` makes.
// @ts-expect-error -- the build has no declaration files; the source types it (src/database/embedded-postgres.ts).
import { startEmbeddedPostgres } from '../../dist/src/database/embedded-postgres.js';

/**
 * One PostgreSQL for the whole run: the embedded one by default, or a fresh database on DATABASE_URL's
 * server (dropped afterwards), so the suite never touches existing data.
 */
export default async function globalSetup(): Promise<void> {
  const external = process.env.DATABASE_URL;
  if (external) {
    const name = `mas_test_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: external });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(external);
    url.pathname = `/${name}`;
    process.env.TEST_DATABASE_URL = url.toString();
    process.env.TEST_DATABASE_NAME = name;
    process.env.TEST_DATABASE_KIND = 'external';
    return;
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mas-test-db-'));
  const database = await startEmbeddedPostgres(dataDir, {
    log: () => undefined,
    error: (m: string) => console.error(m),
  });
  process.env.TEST_DATABASE_URL = database.url;
  process.env.TEST_DATABASE_KIND = 'embedded';
  (globalThis as { __testDatabase?: unknown }).__testDatabase = { stop: database.stop, dataDir };
}
