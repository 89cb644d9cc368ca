// Load soak (npm run soak): the built service in a child process on a PostgreSQL of its own, then mixed reads
// and writes at full speed over loopback with autocannon for SOAK_SECONDS (60) after a warm-up of
// SOAK_WARMUP_SECONDS (20). Fails (exit 1) on any connection error, timeout or status other than the expected
// one for its request, or when the service's resident memory at the end is more than 20 % above what it was
// after the warm-up. Under load RSS moves in a sawtooth between the garbage collector's major collections
// (170-280 MiB at this rate), so a reading at a random moment measures where the tooth happened to be, not what
// the service holds: both figures are read when the load has stopped, after a full collection the service runs
// on request (bench/service.js, `--expose-gc`); the readings every 10 s under load and their range are reported
// too. DATABASE_URL: a fresh database on that server (dropped afterwards); else embedded.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createScratchDatabase } from '../dist/src/database/scratch-database.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const WARMUP_SECONDS = Number(process.env.SOAK_WARMUP_SECONDS ?? 20);
const CONNECTIONS = 8;
const MAX_RSS_GROWTH = 0.2;
/** RSS readings under load, for the report: every 0.5 s. */
const RSS_EVERY_MS = 500;
const PASSWORD = 'soak-admin-password-0123';
const log = (message) => process.stderr.write(`[soak] ${message}\n`);

const cleanups = [];
async function cleanup() {
  while (cleanups.length > 0)
    await cleanups
      .pop()()
      .catch((error) => log(`clean-up: ${error.message}`));
}
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => void cleanup().finally(() => process.exit(130)));

async function databaseUrl() {
  const external = process.env.DATABASE_URL?.trim();
  if (!external) return undefined;
  const database = await createScratchDatabase(external, 'mas_soak');
  cleanups.push(database.drop);
  return database.url;
}

async function startService() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mas-soak-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const { DATABASE_URL: _external, ...rest } = process.env;
  const url = await databaseUrl();
  const child = fork(path.join(BENCH_DIR, 'service.js'), [], {
    // The RSS figures are read after a full collection, which service.js runs when asked.
    execArgv: ['--expose-gc'],
    env: {
      ...rest,
      ...(url ? { DATABASE_URL: url } : {}),
      NODE_ENV: 'production',
      DATA_DIR: dataDir,
      JWT_SECRET: randomBytes(32).toString('base64url'),
      LOG_LEVEL: 'warn',
      ADMIN_PASSWORD: PASSWORD,
      SWAGGER_ENABLED: 'false',
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const serviceLog = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => serviceLog.push(...chunk.split('\n').filter((line) => line.trim() !== '')));
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.send('stop');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  });
  const baseUrl = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the service did not start in 90 s')), 90_000);
    child.once('message', (message) => {
      clearTimeout(timer);
      resolve(message.url);
    });
    void exited.then((code) => reject(new Error(`the service exited (${code}): ${serviceLog.join('\n')}`)));
  });
  /** The service's RSS in MiB right after a full garbage collection (asked over the IPC channel). */
  const settledRss = () =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the service did not answer the gc request')), 15_000);
      const onMessage = (message) => {
        if (typeof message?.rss !== 'number') return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(message.rss / 2 ** 20);
      };
      child.on('message', onMessage);
      child.send('gc');
    });
  return { baseUrl, pid: child.pid, serviceLog, settledRss };
}

async function rssOf(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) * 1024;
}

async function api(baseUrl, method, route, token, body) {
  const response = await globalThis.fetch(baseUrl + route, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** Module codes AAA000..ZZZ999, one per created module, never repeated within a run. */
let created = 0;
function nextCode() {
  const n = created++;
  const letters = Math.floor(n / 1000);
  const letter = (i) => String.fromCharCode(65 + (Math.floor(letters / 26 ** i) % 26));
  return `${letter(2)}${letter(1)}${letter(0)}${String(n % 1000).padStart(3, '0')}`;
}

function mixed(baseUrl, token, moduleId, seconds) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  // Each request carries the status it must get; anything else counts as a failure.
  const requests = [
    { method: 'GET', path: '/api/modules?per_page=20', expect: 200 },
    { method: 'GET', path: '/api/auth/me', expect: 200 },
    {
      method: 'POST',
      path: '/api/modules',
      expect: 201,
      setupRequest: (request) => ({
        ...request,
        body: JSON.stringify({ code: nextCode(), year: 2026, credits: 15 }),
      }),
    },
    { method: 'GET', path: `/api/modules/${moduleId}`, expect: 200 },
    {
      method: 'PUT',
      path: `/api/modules/${moduleId}`,
      expect: 200,
      setupRequest: (request) => ({
        ...request,
        body: JSON.stringify({
          code: 'SOK001',
          year: 2026,
          credits: 10 + (created % 20),
          description: 'soak',
        }),
      }),
    },
    { method: 'GET', path: '/api/users?per_page=20', expect: 200 },
    { method: 'GET', path: '/api/health/ready', expect: 200 },
  ];
  const unexpected = {};
  const instance = autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
    headers,
    requests: requests.map(({ expect: _expect, ...request }) => request),
  });
  // Responses arrive in order per connection: match each to its place in the request cycle.
  const positions = new Map();
  instance.on('response', (client, statusCode) => {
    const position = positions.get(client) ?? 0;
    positions.set(client, (position + 1) % requests.length);
    const wanted = requests[position];
    if (statusCode !== wanted.expect) {
      const key = `${wanted.method} ${wanted.path} -> ${statusCode}`;
      unexpected[key] = (unexpected[key] ?? 0) + 1;
    }
  });
  return instance.then((result) => ({ result, unexpected }));
}

async function main() {
  const started = Date.now();
  const { baseUrl, pid, serviceLog, settledRss } = await startService();
  log(`service ${baseUrl} (pid ${pid})`);
  const { token } = await api(baseUrl, 'POST', '/api/auth/login', undefined, {
    username: 'admin',
    password: PASSWORD,
  });
  const module = await api(baseUrl, 'POST', '/api/modules', token, {
    code: 'SOK001',
    year: 2026,
    credits: 10,
  });
  created = 1000; // AAA000-AAA999 stay free; SOK001 is far away

  // Every RSS reading under load, with its time.
  const readings = [];
  const sampler = setInterval(() => {
    void rssOf(pid).then(
      (rss) => readings.push({ at: Date.now(), mib: rss / 2 ** 20 }),
      () => undefined,
    );
  }, RSS_EVERY_MS);
  const warm = await mixed(baseUrl, token, module.id, WARMUP_SECONDS);
  const warmEnd = Date.now();
  const rssAfterWarmup = await settledRss();
  log(
    `warm-up: ${warm.result.requests.total} requests, RSS ${rssAfterWarmup.toFixed(1)} MiB after a full collection`,
  );
  const soak = await mixed(baseUrl, token, module.id, SECONDS);
  clearInterval(sampler);
  const rssAtEnd = await settledRss();
  // One reading per 10 s of the run, to tell a plateau from a steady climb.
  const underLoad = readings.filter(({ at }) => at > warmEnd);
  const rssSamplesMiB = underLoad
    .filter((_, i) => i % (10_000 / RSS_EVERY_MS) === 0)
    .map(({ mib }) => +mib.toFixed(1));
  const rssRange = underLoad.map(({ mib }) => mib);
  const { result, unexpected } = soak;
  const report = {
    seconds: SECONDS,
    connections: CONNECTIONS,
    requests: result.requests.total,
    requestsPerSecond: Math.round(result.requests.average),
    latencyP99Ms: result.latency.p99,
    statuses: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]),
    ),
    errors: result.errors,
    timeouts: result.timeouts,
    unexpected,
    modulesCreated: created - 1000,
    rssAfterWarmupMiB: +rssAfterWarmup.toFixed(1),
    rssAtEndMiB: +rssAtEnd.toFixed(1),
    rssGrowth: +((rssAtEnd - rssAfterWarmup) / rssAfterWarmup).toFixed(3),
    rssMinMaxMiB: [+Math.min(...rssRange).toFixed(1), +Math.max(...rssRange).toFixed(1)],
    rssSamplesMiB,
    serviceLogLines: serviceLog.length,
    tookSeconds: Math.round((Date.now() - started) / 1000),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  const problems = [];
  if (result.errors > 0 || result.timeouts > 0)
    problems.push(`${result.errors} errors, ${result.timeouts} timeouts`);
  if (Object.keys(unexpected).length > 0) problems.push(`unexpected statuses ${JSON.stringify(unexpected)}`);
  if (report.rssGrowth > MAX_RSS_GROWTH) problems.push(`RSS grew ${(report.rssGrowth * 100).toFixed(1)} %`);
  if (result.requests.total === 0) problems.push('no requests completed');
  if (serviceLog.length > 0)
    problems.push(`the service logged at warn or above:\n${serviceLog.slice(0, 5).join('\n')}`);
  return problems;
}

main()
  .then(async (problems) => {
    await cleanup();
    if (problems.length > 0) {
      log(`FAILED: ${problems.join('; ')}`);
      process.exit(1);
    }
    log('passed');
    process.exit(0);
  })
  .catch(async (error) => {
    log(`FAILED: ${error instanceof Error ? error.stack : String(error)}`);
    await cleanup();
    process.exit(1);
  });
