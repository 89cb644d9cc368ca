import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type DataSource } from 'typeorm';
import { getDataSourceToken } from '@nestjs/typeorm';
import { type RunningService, startService } from '../../src/app.js';
import { type AppConfig, loadConfig } from '../../src/config/app-config.js';
import { LoginThrottle } from '../../src/auth/login-throttle.js';
import { createScratchDatabase, type ScratchDatabase } from '../../src/database/scratch-database.js';
import { client, type Client } from './http.js';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

export interface TestApp {
  service: RunningService;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  dataSource: DataSource;
  config: AppConfig;
  /**
   * Empties every table and forgets failed logins; call in `beforeEach`. Ids are not restarted, so the
   * service's 5-second user cache never mistakes a new user for an old one with the same id.
   */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/**
 * This Jest worker's test database, one of those global-setup.ts prepared (on the embedded server, or fresh ones
 * on DATABASE_URL's server): worker N uses the N-th, so files running at once in different workers never share
 * rows.
 */
/**
 * The tables a test writes, children before parents, in the groups one transaction empties (the change feed's
 * two apart: their DELETE triggers keep its marker right). The singletons the migrations seed (`module_stats`,
 * `user_stats`, `webhook_dispatch`) stay: the totals' DELETE triggers keep them right.
 */
const WRITTEN_TABLE_GROUPS = [
  [
    'webhook_deliveries',
    'webhooks',
    'assignment_files',
    'assignments',
    'user_module_roles',
    'modules',
    'users',
    'audit_events',
    'idempotency_keys',
    'lms_exports',
  ],
  ['change_events'],
  ['change_events_pruned'],
];

/** Empties every table a test writes: DELETE for the few rows most tests leave, TRUNCATE after a `big` one. */
export async function emptyWrittenTables(dataSource: DataSource, big = false): Promise<void> {
  for (const tables of WRITTEN_TABLE_GROUPS) {
    await dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL statement_timeout = 0`);
      await manager.query(`SET LOCAL lock_timeout = 0`);
      if (big) await manager.query(`TRUNCATE ${tables.join(', ')} CASCADE`);
      else for (const table of tables) await manager.query(`DELETE FROM ${table}`);
    });
  }
}

export function testDatabaseUrl(): string {
  const urls = process.env.TEST_DATABASE_URLS?.split(' ');
  if (!urls)
    throw new Error('TEST_DATABASE_URLS is not set: run the e2e tests through jest (global-setup.ts)');
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  const url = urls[worker - 1];
  if (!url)
    throw new Error(
      `No test database for Jest worker ${process.env.JEST_WORKER_ID} (${urls.length} prepared)`,
    );
  return url;
}

/** A database a test made for itself; the run drops it. */
export type RunDatabase = Pick<ScratchDatabase, 'name' | 'url'>;

/**
 * A database of its own on the test database's server, named `prefix` + the run's tag + a unique suffix. The run
 * drops it at its end (global-setup.ts says why not before), so a test need not.
 */
export async function scratchDatabase(prefix: string): Promise<RunDatabase> {
  const tag = process.env.TEST_RUN_TAG;
  if (!tag) throw new Error('TEST_RUN_TAG is not set: run the tests through jest (global-setup.ts)');
  scratchCount += 1;
  const { name, url } = await createScratchDatabase(
    testDatabaseUrl(),
    prefix,
    `${prefix}_${tag}_${process.pid}_${scratchCount}`,
  );
  return { name, url };
}
let scratchCount = 0;

/**
 * Boots the real service (AppModule on Fastify, every global provider) on a loopback port against the test
 * database, with its own temporary data and storage directories. Its background work (the WorkersModule,
 * src/workers/: the webhook job engine's workers and maintenance, the webhook dispatcher's loop, the start-up
 * sweeps, the retention prunes, the membership sweep) is off: AppModule imports the WorkersModule only for a test
 * that asks with `startTestApp({ backgroundWorkers: true })` or `useTestApp({ backgroundWorkers: true })`.
 */
export async function startTestApp(overrides: Partial<AppConfig> = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mas-test-'));
  const config: AppConfig = {
    ...loadConfig({}),
    databaseUrl: testDatabaseUrl(),
    port: 0,
    host: '127.0.0.1',
    dataDir,
    storageDir: path.join(dataDir, 'files'),
    jwtSecret: TEST_JWT_SECRET,
    logLevel: (process.env.TEST_LOG_LEVEL as AppConfig['logLevel'] | undefined) ?? 'silent',
    adminPassword: 'bootstrap-admin-password',
    // Off unless the test asks for them with `backgroundWorkers: true` (README, "Test it").
    backgroundWorkers: false,
    ...overrides,
  };
  const service = await startService(config);
  const dataSource = service.app.get<DataSource>(getDataSourceToken());
  return {
    service,
    url: service.url,
    dataSource,
    config,
    async reset() {
      // DELETE, not TRUNCATE, for the few rows most tests leave: a DELETE takes 2-3 ms where a TRUNCATE takes
      // 40-60 (it makes new files for every table and index and invalidates every backend's cached plans);
      // across the suite's resets that was a tenth of `npm test`'s time. Same rows left (none), same identities
      // (a TRUNCATE without RESTART IDENTITY keeps them too); the module totals' DELETE trigger keeps
      // module_stats right as its TRUNCATE trigger did. After a test that wrote thousands of rows the reset
      // truncates, so dead rows do not pile up under the next tests' statements.
      // In the order the service's own transactions take these tables (a delivery records its attempt in
      // webhook_deliveries and webhooks before its audit event; a write touches its rows before the audit and
      // change events), so a background delivery still running never deadlocks with the reset. The feed's two
      // tables go one transaction each: a feed read (the webhook dispatcher's, woken by the last test's commit)
      // locks change_events_pruned before change_events and the retention prune the other way round, so one
      // transaction holding both could deadlock with either.
      // Each in a transaction of its own without the service's statement and lock timeouts: a test may set them
      // to a few hundred milliseconds (the interactive bound), which a reset on a busy machine can outlast; the
      // reset is the harness's work, not the service's.
      const big = await dataSource.transaction(async (manager) => {
        await manager.query(`SET LOCAL statement_timeout = 0`);
        const [row] = await manager.query<{ big: boolean }[]>(
          `SELECT (SELECT count(*) FROM (SELECT FROM users LIMIT 1001) x)
              + (SELECT count(*) FROM (SELECT FROM modules LIMIT 1001) x)
              + (SELECT count(*) FROM (SELECT FROM user_module_roles LIMIT 1001) x)
              + (SELECT count(*) FROM (SELECT FROM audit_events LIMIT 1001) x)
              + (SELECT count(*) FROM (SELECT FROM change_events LIMIT 1001) x) > 1000 AS big`,
        );
        return row.big;
      });
      await emptyWrittenTables(dataSource, big);
      await service.app.get(LoginThrottle).reset();
    },
    async close() {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** What {@link useTestApp} gives: the area's service and a client bound to it, handed to the parts of an e2e file. */
export interface UsedTestApp {
  app: TestApp;
  api: Client;
}

/**
 * One service for the enclosing `describe` (started in `beforeAll`, stopped in `afterAll`), with a client
 * bound to it. Both handles may be captured at once; they resolve to the running service from the first hook on.
 */
export function useTestApp(overrides: Partial<AppConfig> = {}): UsedTestApp {
  let started: TestApp | undefined;
  const current = (): TestApp => {
    if (!started) throw new Error('the test service is used before its beforeAll hook ran');
    return started;
  };
  beforeAll(async () => {
    started = await startTestApp(overrides);
  });
  afterAll(() => started?.close());
  const app: TestApp = {
    get service() {
      return current().service;
    },
    get url() {
      return current().url;
    },
    get dataSource() {
      return current().dataSource;
    },
    get config() {
      return current().config;
    },
    reset: () => current().reset(),
    close: () => current().close(),
  };
  return { app, api: client(() => app.url) };
}
