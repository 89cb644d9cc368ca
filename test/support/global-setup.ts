import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
// Loaded by Node directly (not through Jest's module mapper), so it uses the build that `pretest` makes.
// @ts-expect-error -- the build has no declaration files; the source types it (src/database/embedded-postgres.ts).
import { startEmbeddedPostgres } from '../../dist/src/database/embedded-postgres.js';
// @ts-expect-error -- as above (src/database/scratch-database.ts).
import { createScratchDatabase } from '../../dist/src/database/scratch-database.js';

/** What global-teardown.ts undoes: the embedded server stopped and its directory removed, or the run's databases dropped. */
export interface TestDatabase {
  stop(): Promise<void>;
}

/**
 * One PostgreSQL server for the whole run (every tier it selects): the embedded one by default, or DATABASE_URL's
 * server, on which the run works in databases of its own (dropped afterwards), so the suite never touches existing
 * data.
 *
 * Jest runs test files in several worker processes (`--maxWorkers`); each worker gets a database of its own on
 * that server, so one file's `reset()` never empties another's tables (rows, `TRUNCATE`s, advisory locks and
 * `NOTIFY` channels are all per database in PostgreSQL). TEST_DATABASE_URLS lists them, worker 1's first;
 * test/support/app.ts's testDatabaseUrl() picks the one of the worker it runs in (JEST_WORKER_ID).
 *
 * Every database the run creates, these and the ones a test makes with scratchDatabase(), carries TEST_RUN_TAG in
 * its name, and the teardown drops them all at once when no test runs any more: a `DROP DATABASE` waits for every
 * backend of the server to take note of it, so one issued while another worker's test is busy could wait for it.
 */
export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  const tag = `r${randomBytes(4).toString('hex')}`;
  process.env.TEST_RUN_TAG = tag;
  const external = process.env.DATABASE_URL;
  let server: { url: string; kind: 'external' | 'embedded' } & TestDatabase;
  if (external) {
    server = { url: external, kind: 'external', stop: () => dropRunDatabases(external, tag) };
  } else {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mas-test-db-'));
    // A throwaway cluster: no fsync (src/database/embedded-postgres.ts says what that changes and what not).
    const embedded = (await startEmbeddedPostgres(
      dataDir,
      { log: () => undefined, error: (m: string) => console.error(m) },
      { throwaway: true },
    )) as { url: string; stop(): Promise<void> };
    server = {
      url: embedded.url,
      kind: 'embedded',
      // Stopping the server and removing its directory takes every database with it.
      async stop() {
        await embedded.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  (globalThis as { __testDatabase?: TestDatabase }).__testDatabase = server;
  const urls: string[] = [];
  for (let worker = 1; worker <= Math.max(1, globalConfig.maxWorkers); worker++) {
    const database = (await createScratchDatabase(server.url, 'mas_test', `mas_test_${tag}_w${worker}`)) as {
      url: string;
    };
    urls.push(database.url);
  }
  process.env.TEST_DATABASE_URLS = urls.join(' ');
  process.env.TEST_DATABASE_KIND = server.kind;
}

/** Drops every database of the run (its name holds `_<tag>_`) on the server of `serverUrl`. */
async function dropRunDatabases(serverUrl: string, tag: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ name: string }>(
      `SELECT datname AS name FROM pg_database WHERE strpos(datname, $1) > 0`,
      [`_${tag}_`],
    );
    for (const { name } of rows) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
