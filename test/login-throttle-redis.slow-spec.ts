import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { type LoginAttempt, LoginThrottle } from '../src/auth/login-throttle.js';
import { startTestApp, type TestApp } from './support/app.js';
import { DEFAULT_PASSWORD, makeUser } from './support/factories.js';
import { client } from './support/http.js';
import { uniqueRedisPrefix } from './support/redis.js';
import { freePort } from './support/idp.js';
import { describeWhenAvailable, onPath, redisRequirement, type Requirement } from './support/requires.js';
import { waitFor } from './support/wait-for.js';

const needsRedis = await redisRequirement();
const redisUrl = needsRedis.found;

const login = (app: TestApp, username: string, password: string) =>
  client(app.url).post('/api/auth/login', { body: { username, password } });

describeWhenAvailable(needsRedis, 'Login throttle in Redis (REDIS_URL), shared by two services', () => {
  const prefix = uniqueRedisPrefix('throttle');
  let one: TestApp;
  let two: TestApp;
  let redis: Redis;

  beforeAll(async () => {
    [one, two] = await Promise.all([
      startTestApp({ redisUrl, redisKeyPrefix: prefix }),
      startTestApp({ redisUrl, redisKeyPrefix: prefix }),
    ]);
    redis = new Redis(redisUrl!);
  });
  afterAll(async () => {
    await one?.reset();
    await Promise.all([one?.close(), two?.close()]);
    redis?.disconnect();
  });
  beforeEach(() => one.reset());

  it('counts failures on either service: the eleventh attempt is 429 on both, the right password too', async () => {
    const user = await makeUser(one.dataSource);
    for (let i = 0; i < 10; i++) {
      const res = await login(i % 2 === 0 ? one : two, user.username, 'wrong-password');
      expect(res.status).toBe(401);
    }
    for (const app of [one, two]) {
      const res = await login(app, user.username, DEFAULT_PASSWORD);
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ success: false, data: null, message: expect.any(String) });
    }
  });

  it('keeps the counters under its own key prefix, expiring with the 60 s window', async () => {
    await login(one, 'nobody-at-all', 'wrong-password');
    const keys = await redis.keys(`${prefix}{login-failures}:*`);
    expect(keys).toHaveLength(2);
    expect(keys.some((key) => key.includes('nobody'))).toBe(false);
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    }
  });

  it('loses no failure under concurrent attempts (one script per attempt)', async () => {
    const throttle = one.service.app.get(LoginThrottle);
    const other = two.service.app.get(LoginThrottle);
    const attempts = await Promise.all(
      Array.from({ length: 9 }, async (_, i) => (i % 2 ? throttle : other).admit('racer', '192.0.2.9')),
    );
    for (const attempt of attempts) expect(attempt).toMatchObject({ id: expect.any(String) });
    const tenth = (await other.admit('racer', '192.0.2.11')) as LoginAttempt;
    // Ten in flight: the next one waits, and nothing is blocked (none has failed yet).
    expect(await throttle.admit('racer', '192.0.2.12')).toBe('busy');
    expect(await throttle.isBlocked('RACER', '192.0.2.12')).toBe(false);
    await throttle.release(tenth);
    expect(await other.admit('racer', '192.0.2.11')).toMatchObject({ id: expect.any(String) });
    await Promise.all(
      attempts.map(async (attempt, i) => (i % 2 ? other : throttle).fail(attempt as LoginAttempt)),
    );
    expect(await throttle.isBlocked('RACER', '192.0.2.12')).toBe(false);
    expect(await throttle.admit('racer', '192.0.2.13')).toBe('busy');
    expect(await other.isBlocked(undefined, '192.0.2.9')).toBe(false);
  });

  it('admits at most 10 of 100 concurrent wrong logins spread over both services', async () => {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        client(i % 2 ? one.url : two.url).post('/api/auth/login', {
          body: { username: 'burst.target', password: `wrong-${i}` },
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(90);
  });

  it('reports Redis as up in readiness', async () => {
    const res = await client(two.url).get('/api/health/ready');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ database: 'up', redis: 'up' });
  });
});

/** A Redis in cluster mode is started from the machine's `redis-server` for the test below. */
const redisServer: Requirement = {
  needs: 'the `redis-server` program on PATH (to start a Redis in cluster mode)',
  found: onPath('redis-server'),
  enable: 'install it (Debian: `apt-get install redis-server`)',
  requiredBy: 'REQUIRE_REDIS',
};

describeWhenAvailable(redisServer, 'Login throttle on a Redis in cluster mode', () => {
  let dir: string;
  let server: ChildProcess;
  let redis: Redis;
  let app: TestApp;
  let output = '';

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mas-redis-cluster-'));
    const port = await freePort();
    // One node holding every slot: enough for Redis to refuse a script over keys of two slots (CROSSSLOT).
    server = spawn(
      redisServer.found!,
      ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--dir', dir, '--save', ''],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const url = `redis://127.0.0.1:${port}`;
    redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 50 });
    redis.on('error', () => undefined);
    await waitFor(
      () =>
        redis.connect().then(
          () => true,
          () => false,
        ),
      {
        what: 'the cluster-mode Redis to accept a connection',
        seen: () => output,
      },
    );
    await redis.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    await waitFor(async () => String(await redis.call('CLUSTER', 'INFO')).includes('cluster_state:ok'), {
      what: 'the cluster state to be ok',
      seen: () => output,
    });
    app = await startTestApp({ redisUrl: url, redisKeyPrefix: uniqueRedisPrefix('cluster') });
  });
  afterAll(async () => {
    await app?.close();
    redis?.disconnect();
    server?.kill('SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps counting (no CROSSSLOT): every key of the throttle is in one slot', async () => {
    const user = await makeUser(app.dataSource);
    for (let i = 0; i < 10; i++) expect((await login(app, user.username, 'wrong-password')).status).toBe(401);
    expect((await login(app, user.username, DEFAULT_PASSWORD)).status).toBe(429);
    const keys = await redis.keys('*');
    expect(keys.length).toBeGreaterThanOrEqual(2);
    const slots = new Set(await Promise.all(keys.map((key) => redis.call('CLUSTER', 'KEYSLOT', key))));
    expect(slots.size).toBe(1);
  });
});

describe('Login throttle when Redis cannot be reached', () => {
  let app: TestApp;
  // Nothing listens on port 1: every connection attempt is refused at once.
  beforeAll(async () => {
    app = await startTestApp({ redisUrl: 'redis://127.0.0.1:1', redisKeyPrefix: uniqueRedisPrefix('down') });
  });
  afterAll(() => app?.close());

  it('fails open: logins still work and failures are not counted', async () => {
    const user = await makeUser(app.dataSource);
    for (let i = 0; i < 12; i++) expect((await login(app, user.username, 'wrong-password')).status).toBe(401);
    const res = await login(app, user.username, DEFAULT_PASSWORD);
    expect(res.status).toBe(200);
    expect(typeof res.body.data.token).toBe('string');
  });

  it('readiness stays 200 and reports Redis down', async () => {
    const res = await client(app.url).get('/api/health/ready');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { database: 'up', redis: 'down' }, message: 'Ready' });
  });
});

describe('Readiness without REDIS_URL', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  it('carries no redis field', async () => {
    const res = await client(app.url).get('/api/health/ready');
    expect(res.body.data).toEqual({ database: 'up' });
  });
});
