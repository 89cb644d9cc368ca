// What bench/writes.js, bench/delivery.js and bench/exports.js share: a database (a scratch one on DATABASE_URL's server, else an
// embedded PostgreSQL in a temporary directory), the built service in a child process (bench/service.js) and
// its first admin's token. Each registers how to release what it made in `cleanups` (run in reverse order by
// {@link runWithCleanups}); {@link writeResults} writes a run's figures and chart to bench/results/.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { createScratchDatabase } from '../dist/src/database/scratch-database.js';
import { ratioChart } from './report.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const ADMIN_PASSWORD = randomBytes(12).toString('hex');

export async function database(cleanups, prefix) {
  if (process.env.DATABASE_URL) {
    const scratch = await createScratchDatabase(process.env.DATABASE_URL, prefix);
    cleanups.push(scratch.drop);
    return scratch.url;
  }
  const { startEmbeddedPostgres, releaseShutdownSignals } =
    await import('../dist/src/database/embedded-postgres.js');
  releaseShutdownSignals();
  const dir = await mkdtemp(path.join(os.tmpdir(), `${prefix}-`));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const embedded = await startEmbeddedPostgres(dir, {
    log: () => undefined,
    error: (message) => process.stderr.write(`${message}\n`),
  });
  cleanups.push(() => embedded.stop());
  return embedded.url;
}

/** Starts bench/service.js on `databaseUrl` with `env` added; `events(on)` switches its change-event recorder. */
export async function startService(databaseUrl, cleanups, env = {}) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mas-bench-data-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const child = fork(path.join(BENCH_DIR, 'service.js'), [], {
    env: {
      ...process.env,
      MALLOC_ARENA_MAX: '2',
      MALLOC_MMAP_THRESHOLD_: '131072',
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      JWT_SECRET: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'warn',
      ADMIN_USERNAME: 'admin',
      ADMIN_PASSWORD,
      DB_POOL_SIZE: '10',
      SWAGGER_ENABLED: 'false',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // BENCH_PROFILE_DIR=dir: a V8 CPU profile of the service's whole run there (bench/profile-summary.js).
    execArgv: process.env.BENCH_PROFILE_DIR
      ? [...process.execArgv, '--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
      : process.execArgv,
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  cleanups.push(async () => {
    if (child.connected) child.send('stop');
    await exited;
  });
  const { url } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    void exited.then((code) => reject(new Error(`the service exited (${code}) before listening`)));
  });
  const events = (on) =>
    new Promise((resolve) => {
      const listener = (message) => {
        if (message?.events === undefined) return;
        child.off('message', listener);
        resolve();
      };
      child.on('message', listener);
      child.send(on ? 'events:on' : 'events:off');
    });
  const token = JSON.parse(
    await (
      await globalThis.fetch(`${url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
      })
    ).text(),
  ).data.token;
  return { url, events, token, pid: child.pid };
}

/** A request with the bearer `token`; throws on a status of 300 or more; returns the body's text. */
export async function call(url, method, route, token, body, contentType = 'application/json') {
  const response = await globalThis.fetch(url + route, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    body: body === undefined || typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${text.slice(0, 300)}`);
  return text;
}

/** Runs `main`, then every clean-up step in reverse order (a failing step is reported, the rest still run). */
export async function runWithCleanups(main, cleanups) {
  try {
    await main();
  } finally {
    for (const step of cleanups.reverse()) await step().catch((error) => process.stderr.write(`${error}\n`));
  }
}

/**
 * bench/results/<name>.json (`figures`, stamped with the time) and <name>.svg (the ratio chart of `rows` with
 * `chart`'s title, marks and legend); says which files it wrote through `out`.
 */
export async function writeResults(name, figures, rows, chart, out) {
  const dir = new URL('./results/', import.meta.url);
  await mkdir(dir, { recursive: true });
  await writeFile(
    new URL(`${name}.json`, dir),
    JSON.stringify({ at: new Date().toISOString(), ...figures }, null, 2) + '\n',
  );
  await writeFile(new URL(`${name}.svg`, dir), ratioChart(rows, chart));
  out(`written: bench/results/${name}.json, bench/results/${name}.svg`);
}
