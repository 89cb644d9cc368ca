// Two replicas of the built service (node dist/src/main.js) on different ports, sharing one PostgreSQL
// database, one Redis and one S3-compatible object store, as they would behind a load balancer. Run with
// `npm run build && node --test test/scale/two-instances.test.js` (CI: .ci/steps/60-two-instances.sh).
//
// PostgreSQL: a fresh database on DATABASE_URL's server, else on 127.0.0.1:5432 when one answers, else an
// embedded one; dropped or removed afterwards. Redis: REDIS_TEST_URL or 127.0.0.1:6379 under a key prefix of
// its own; without one the test is skipped with a line saying so (REQUIRE_REDIS=1 fails instead). S3: s3rver.
import { spawn } from 'node:child_process';
import { Blob, Buffer } from 'node:buffer';
import console from 'node:console';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import S3rver from 's3rver';
import { probeTestRedis } from '../support/redis.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ADMIN_PASSWORD = 'two-instances-admin-password';
const JWT_SECRET = randomBytes(32).toString('base64url');
/** The user re-check cache may be this stale on another replica (the contract allows 5 s). */
const STALE_BOUND_MS = 5000;

const cleanups = [];
const instances = [];
let skipReason;

function answers(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.setTimeout(1000);
    socket.on('connect', () => resolve(socket.end() && true));
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => resolve(socket.destroy() && false));
  });
}

/** A fresh, empty database: on an existing server, or on an embedded PostgreSQL started here. */
async function freshDatabase() {
  let server = process.env.DATABASE_URL;
  if (!server && (await answers(5432))) server = 'postgres://postgres@127.0.0.1:5432/postgres';
  if (!server) {
    const { startEmbeddedPostgres } = await import(path.join(ROOT, 'dist/src/database/embedded-postgres.js'));
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mas-two-db-'));
    const embedded = await startEmbeddedPostgres(dataDir, { log: () => undefined, error: console.error });
    cleanups.push(async () => {
      await embedded.stop();
      await rm(dataDir, { recursive: true, force: true });
    });
    server = embedded.url;
  }
  const { createScratchDatabase } = await import(path.join(ROOT, 'dist/src/database/scratch-database.js'));
  const database = await createScratchDatabase(server, 'mas_two');
  cleanups.push(database.drop);
  return database.url;
}

async function objectStore() {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'mas-two-s3-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: 'mas-files' }],
  });
  const { port } = await server.run();
  cleanups.push(async () => {
    await server.close();
    await rm(directory, { recursive: true, force: true });
  });
  return `http://127.0.0.1:${port}`;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Starts `node dist/src/main.js`; resolves once it listens, with its output kept for the checks. */
async function startInstance(name, env) {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `mas-two-${name}-`));
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const instance = { name, url: `http://127.0.0.1:${port}`, child, output: '', exit: undefined };
  child.stdout.on('data', (chunk) => (instance.output += chunk));
  child.stderr.on('data', (chunk) => (instance.output += chunk));
  instance.exited = new Promise((resolve) => child.on('exit', (code) => resolve((instance.exit = code))));
  instances.push(instance);
  cleanups.push(async () => {
    if (instance.exit === undefined) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });
  return instance;
}

async function ready(instance, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (instance.exit !== undefined) throw new Error(`${instance.name} exited early:\n${instance.output}`);
    try {
      const res = await globalThis.fetch(`${instance.url}/api/health/ready`);
      if (res.status === 200) return res.json();
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${instance.name} not ready in time:\n${instance.output}`);
}

async function call(instance, method, route, { token, body } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await globalThis.fetch(instance.url + route, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const login = async (instance, username, password) =>
  call(instance, 'POST', '/api/auth/login', { body: { username, password } });

let a;
let b;
let database;
let redis;
let prefix;

before(async () => {
  const { url: redisAt, missing } = await probeTestRedis();
  if (missing !== undefined) {
    skipReason = 'no Redis on this machine (start one, or set REDIS_TEST_URL; REQUIRE_REDIS=1 fails instead)';
    process.stdout.write(`SKIPPED two-instance test: ${skipReason}\n`);
    return;
  }
  prefix = `mas-two:${process.pid}:${Date.now()}:`;
  redis = new Redis(redisAt);
  cleanups.push(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  database = await freshDatabase();
  const s3 = await objectStore();
  const env = {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    DATABASE_URL: database,
    JWT_SECRET,
    ADMIN_PASSWORD,
    LOG_LEVEL: 'info',
    REDIS_URL: redisAt,
    REDIS_KEY_PREFIX: prefix,
    STORAGE_S3_BUCKET: 'mas-files',
    STORAGE_S3_ENDPOINT: s3,
    STORAGE_S3_REGION: 'us-east-1',
    STORAGE_S3_FORCE_PATH_STYLE: 'true',
    // s3rver's fixed key pair, read by the AWS SDK's default credential chain as real ones would be.
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
  };
  // Both at the same moment, on an empty database.
  [a, b] = await Promise.all([startInstance('A', env), startInstance('B', env)]);
  const states = await Promise.all([ready(a), ready(b)]);
  for (const state of states) assert.deepEqual(state.data, { database: 'up', redis: 'up' });
});

after(async () => {
  for (const instance of instances) if (instance.exit === undefined) instance.child.kill('SIGTERM');
  await Promise.all(instances.map((instance) => Promise.race([instance.exited, sleep(15_000)])));
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => console.error(error));
});

/** A test of the running pair; skipped, saying why, when there is no Redis. node:test awaits it itself. */
const t = (name, fn) => void test(name, (context) => (skipReason ? context.skip(skipReason) : fn(context)));

t('both started together on an empty database: one migration run, one first administrator', async () => {
  const migrated = instances.filter((instance) => instance.output.includes('"msg":"Applied migrations"'));
  assert.equal(migrated.length, 1, 'exactly one instance applied the migrations');
  const created = instances.filter((instance) => instance.output.includes('Created the first administrator'));
  assert.equal(created.length, 1, 'exactly one instance created the first administrator');
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT count(*)::int AS n, count(DISTINCT name)::int AS d FROM migrations`,
    );
    assert.ok(rows[0].n > 0);
    assert.equal(rows[0].n, rows[0].d, 'no migration recorded twice');
    const admins = await client.query(`SELECT username FROM users`);
    assert.deepEqual(admins.rows, [{ username: 'admin' }]);
  } finally {
    await client.end();
  }
});

t('a token issued by one instance is accepted by the other', async () => {
  const session = await login(a, 'admin', ADMIN_PASSWORD);
  assert.equal(session.status, 200);
  const me = await call(b, 'GET', '/api/auth/me', { token: session.body.data.token });
  assert.equal(me.status, 200);
  assert.equal(me.body.data.username, 'admin');
});

t('a module created on one is read, changed and deleted on the other', async () => {
  const token = (await login(b, 'admin', ADMIN_PASSWORD)).body.data.token;
  const created = await call(a, 'POST', '/api/modules', {
    token,
    body: { code: 'SCL101', year: 2026, description: 'Scaling out', credits: 15 },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.data.id;
  assert.equal((await call(b, 'GET', `/api/modules/${id}`, { token })).body.data.code, 'SCL101');
  const changed = await call(b, 'PUT', `/api/modules/${id}`, {
    token,
    body: { code: 'SCL101', year: 2026, description: 'Changed on B', credits: 30 },
  });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  const seen = await call(a, 'GET', `/api/modules/${id}`, { token });
  assert.equal(seen.body.data.description, 'Changed on B');
  assert.equal(seen.body.data.credits, 30);
  assert.equal((await call(b, 'DELETE', `/api/modules/${id}`, { token })).status, 200);
  assert.equal((await call(a, 'GET', `/api/modules/${id}`, { token })).status, 404);
});

t('an avatar uploaded through one is served by the other', async () => {
  const token = (await login(a, 'admin', ADMIN_PASSWORD)).body.data.token;
  const user = await call(a, 'POST', '/api/users', {
    token,
    body: { username: 'avatar.owner', email: 'avatar.owner@example.edu', password: 'owner-password-1' },
  });
  assert.equal(user.status, 201, JSON.stringify(user.body));
  const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(4000)]);
  const form = new globalThis.FormData();
  form.append('file', new Blob([png], { type: 'image/png' }), 'a.png');
  const put = await globalThis.fetch(`${a.url}/api/users/${user.body.data.id}/avatar`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  assert.equal(put.status, 200, await put.text());
  const got = await globalThis.fetch(`${b.url}/api/users/${user.body.data.id}/avatar`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(got.status, 200);
  assert.equal(got.headers.get('content-type'), 'image/png');
  assert.ok(Buffer.from(await got.arrayBuffer()).equals(png), 'B serves the bytes uploaded through A');
});

t(
  `a password changed on one refuses the old token on the other within ${STALE_BOUND_MS / 1000} s`,
  async (context) => {
    const admin = (await login(a, 'admin', ADMIN_PASSWORD)).body.data.token;
    const created = await call(a, 'POST', '/api/users', {
      token: admin,
      body: { username: 'changer', email: 'changer@example.edu', password: 'first-password-1' },
    });
    assert.equal(created.status, 201);
    const old = (await login(b, 'changer', 'first-password-1')).body.data.token;
    // B checks (and caches) the user with the old token.
    assert.equal((await call(b, 'GET', '/api/auth/me', { token: old })).status, 200);
    // Tokens carry whole seconds: change in a later second than the old token was issued in.
    await sleep(1000 - (Date.now() % 1000) + 5);
    const change = await call(a, 'PUT', '/api/auth/password', {
      token: old,
      body: { current_password: 'first-password-1', new_password: 'second-password-2' },
    });
    assert.equal(change.status, 200, JSON.stringify(change.body));
    const changedAt = Date.now();
    assert.equal((await call(b, 'GET', '/api/auth/me', { token: change.body.data.token })).status, 200);
    let refusedAfter;
    while (Date.now() - changedAt < STALE_BOUND_MS + 2000) {
      if ((await call(b, 'GET', '/api/auth/me', { token: old })).status === 401) {
        refusedAfter = Date.now() - changedAt;
        break;
      }
      await sleep(50);
    }
    assert.ok(refusedAfter !== undefined, 'B never refused the old token');
    assert.ok(refusedAfter <= STALE_BOUND_MS, `B refused the old token only after ${refusedAfter} ms`);
    context.diagnostic(`B refused the old token ${refusedAfter} ms after the change on A`);
    assert.equal((await call(a, 'GET', '/api/auth/me', { token: old })).status, 401);
  },
);

// Last: it blocks the test's client address for a minute.
t('ten failed logins spread over both: the eleventh is 429 on either', async () => {
  for (let i = 0; i < 10; i++) {
    const res = await login(i % 2 === 0 ? a : b, 'admin', 'not-the-password');
    assert.equal(res.status, 401, `attempt ${i + 1}`);
  }
  for (const instance of [a, b]) {
    const res = await login(instance, 'admin', ADMIN_PASSWORD);
    assert.equal(res.status, 429, `eleventh attempt on ${instance.name}`);
  }
});

t('both stop cleanly on SIGTERM', async () => {
  for (const instance of [a, b]) instance.child.kill('SIGTERM');
  assert.deepEqual(await Promise.all([a.exited, b.exited]), [0, 0]);
});
