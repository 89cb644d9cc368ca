import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
// Loaded by Node directly (not through Jest's module mapper), so it uses the build that `pretest` makes.
// @ts-expect-error -- the build has no declaration files; the source types it (src/database/embedded-postgres.ts).
import { startEmbeddedPostgres } from '../../dist/src/database/embedded-postgres.js';
// @ts-expect-error -- as above (src/database/scratch-database.ts).
import { createScratchDatabase } from '../../dist/src/database/scratch-database.js';

/** What global-teardown.ts undoes: the embedded server stopped and its directory removed, or the database dropped. */
export interface TestDatabase {
  stop(): Promise<void>;
}

/**
 * One PostgreSQL for the whole run (every tier it selects): the embedded one by default, or a fresh database on
 * DATABASE_URL's server (dropped afterwards), so the suite never touches existing data.
 */
export default async function globalSetup(): Promise<void> {
  const external = process.env.DATABASE_URL;
  let database: TestDatabase;
  if (external) {
    const scratch = (await createScratchDatabase(external, 'mas_test')) as {
      url: string;
      drop(): Promise<void>;
    };
    process.env.TEST_DATABASE_URL = scratch.url;
    process.env.TEST_DATABASE_KIND = 'external';
    database = { stop: () => scratch.drop() };
  } else {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mas-test-db-'));
    const embedded = (await startEmbeddedPostgres(dataDir, {
      log: () => undefined,
      error: (m: string) => console.error(m),
    })) as { url: string; stop(): Promise<void> };
    process.env.TEST_DATABASE_URL = embedded.url;
    process.env.TEST_DATABASE_KIND = 'embedded';
    database = {
      async stop() {
        await embedded.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  (globalThis as { __testDatabase?: TestDatabase }).__testDatabase = database;
}
