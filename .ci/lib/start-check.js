// Starts the built service (dist/) with the Node that runs this script, on the embedded PostgreSQL in a
// temporary DATA_DIR and a free loopback port, then checks liveness, readiness, an admin login and
// /api/auth/me with its token, stops it with SIGTERM and expects a clean exit (code 0).
//   node .ci/lib/start-check.js            (from the repository root, after `npm run build`)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

const { fetch } = globalThis;
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;

/** @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** @param {boolean} condition @param {string} message */
function check(condition, message) {
  if (!condition) throw new Error(message);
  process.stdout.write(`  ok: ${message}\n`);
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'mas-start-check-'));
const port = await freePort();
const password = randomBytes(12).toString('base64url');
const env = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: String(port),
  HOST: '127.0.0.1',
  ADMIN_PASSWORD: password,
};
delete env.DATABASE_URL;
delete env.NODE_OPTIONS;
const base = `http://127.0.0.1:${port}`;
process.stdout.write(`Node ${process.version}: starting dist/src/main.js on ${base} (DATA_DIR ${dataDir})\n`);

const child = spawn(process.execPath, ['dist/src/main.js'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
child.stdout.on('data', (chunk) => (output += String(chunk)));
child.stderr.on('data', (chunk) => (output += String(chunk)));
/** @type {Promise<number | null>} */
const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));

try {
  let live;
  for (const started = Date.now(); Date.now() - started < START_TIMEOUT_MS; await sleep(250)) {
    if (child.exitCode !== null) break;
    live = await fetch(`${base}/api/health`).catch(() => undefined);
    if (live) break;
  }
  check(live?.status === 200, 'GET /api/health answers 200');
  const ready = await fetch(`${base}/api/health/ready`);
  check(ready.status === 200, 'GET /api/health/ready answers 200 (database up)');
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  /** @type {{ success?: boolean, data?: { token?: string } }} */
  const loginBody = /** @type {any} */ (await login.json());
  check(
    login.status === 200 && typeof loginBody.data?.token === 'string',
    'POST /api/auth/login as admin gives a token',
  );
  const me = await fetch(`${base}/api/auth/me`, {
    headers: { authorization: `Bearer ${loginBody.data?.token}` },
  });
  /** @type {{ data?: { username?: string } }} */
  const meBody = /** @type {any} */ (await me.json());
  check(me.status === 200 && meBody.data?.username === 'admin', 'GET /api/auth/me with that token is admin');
  const wrong = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: `${password}x` }),
  });
  check(wrong.status === 401, 'a wrong password is refused with 401');

  child.kill('SIGTERM');
  const code = await Promise.race([exited, sleep(STOP_TIMEOUT_MS).then(() => 'timeout')]);
  check(code === 0, `SIGTERM stops it with exit code 0 (got ${code})`);
} catch (error) {
  child.kill('SIGKILL');
  process.stderr.write(`${output}\nstart check failed on Node ${process.version}: ${String(error)}\n`);
  process.exitCode = 1;
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
