import { Redis } from 'ioredis';
import { LoginThrottle } from '../src/auth/login-throttle.js';
import { startTestApp, type TestApp } from './support/app.js';
import { DEFAULT_PASSWORD, makeUser } from './support/factories.js';
import { client } from './support/http.js';
import { uniqueRedisPrefix } from './support/redis.js';
import { describeWhenAvailable, redisRequirement } from './support/requires.js';

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
    const keys = await redis.keys(`${prefix}login-failures:*`);
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
    await Promise.all(
      Array.from({ length: 9 }, async (_, i) => {
        expect(await (i % 2 ? throttle : other).admit('racer', '192.0.2.9')).toBeDefined();
      }),
    );
    expect(await throttle.isBlocked('racer', '192.0.2.10')).toBe(false);
    const released = await other.admit('racer', '192.0.2.11');
    expect(await throttle.isBlocked('RACER', '192.0.2.12')).toBe(true);
    await throttle.release(released!);
    expect(await throttle.isBlocked('RACER', '192.0.2.12')).toBe(false);
    expect(await other.admit('racer', '192.0.2.11')).toBeDefined();
    expect(await throttle.admit('racer', '192.0.2.13')).toBeUndefined();
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
