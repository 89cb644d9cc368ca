import pg from 'pg';
import { testDatabaseUrl, useTestApp } from './support/app.js';
import { DEFAULT_PASSWORD, makeUser, tokenFor, type UserRow } from './support/factories.js';
import { client } from './support/http.js';
import { poolOf } from './support/pool.js';
import { waitFor } from './support/wait-for.js';

const login = (url: string, username: string, password: string, forwardedFor?: string) =>
  client(url).post('/api/auth/login', {
    body: { username, password },
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
  });

/** Ten failed logins for ten different usernames (so only the address key fills up). */
async function failTenTimes(url: string, forwardedFor: string) {
  for (let i = 0; i < 10; i++) {
    expect((await login(url, `nobody-${i}`, 'wrong-password', forwardedFor)).status).toBe(401);
  }
}

describe('TRUST_PROXY unset: the address is the socket peer, X-Forwarded-For is ignored', () => {
  const { app } = useTestApp();
  let user: UserRow;

  beforeAll(async () => {
    await app.reset();
    user = await makeUser(app.dataSource);
  });

  it('a client cannot escape the throttle by claiming another address', async () => {
    await failTenTimes(app.url, '198.51.100.1');
    // Another claimed address, the right password: still this socket's address, still blocked.
    const res = await login(app.url, user.username, DEFAULT_PASSWORD, '198.51.100.2');
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ success: false, data: null, message: 'Too many requests, try again later' });
  });
});

describe('TRUST_PROXY=127.0.0.1: behind a proxy the client address comes from X-Forwarded-For', () => {
  const { app } = useTestApp({ trustProxy: ['127.0.0.1'] });
  let user: UserRow;

  beforeAll(async () => {
    await app.reset();
    user = await makeUser(app.dataSource);
  });

  it('ten failures from one client lock that client out, not everyone behind the proxy', async () => {
    await failTenTimes(app.url, '203.0.113.5');
    expect((await login(app.url, user.username, DEFAULT_PASSWORD, '203.0.113.5')).status).toBe(429);
    expect((await login(app.url, user.username, DEFAULT_PASSWORD, '203.0.113.9')).status).toBe(200);
    // A client-supplied hop before the proxy's own entry is not trusted beyond the proxy's word.
    expect((await login(app.url, user.username, DEFAULT_PASSWORD, '203.0.113.9, 203.0.113.5')).status).toBe(
      429,
    );
  });
});

describe('TRUST_PROXY=1 (one hop)', () => {
  const { app } = useTestApp({ trustProxy: 1 });
  let user: UserRow;

  beforeAll(async () => {
    await app.reset();
    user = await makeUser(app.dataSource);
  });

  it('takes the address the nearest proxy saw', async () => {
    await failTenTimes(app.url, '192.0.2.1, 203.0.113.77');
    expect((await login(app.url, user.username, DEFAULT_PASSWORD, '203.0.113.77')).status).toBe(429);
    // What the client wrote before the proxy's entry does not matter.
    expect((await login(app.url, user.username, DEFAULT_PASSWORD, '203.0.113.77, 203.0.113.78')).status).toBe(
      200,
    );
  });
});

describe('the connection pool', () => {
  const { app, api } = useTestApp({ dbStatementTimeoutMs: 1234 });
  let token: string;

  beforeAll(async () => {
    await app.reset();
    token = tokenFor(await makeUser(app.dataSource, { admin: true }));
  });

  it('sets the configured statement timeout on its connections', async () => {
    expect(await app.dataSource.query(`SHOW statement_timeout`)).toEqual([{ statement_timeout: '1234ms' }]);
  });

  it('survives its idle connections being terminated by the server and keeps serving', async () => {
    // Open several pooled connections at once, then let them go idle.
    const warm = await Promise.all(Array.from({ length: 8 }, () => api.get('/api/users', { token })));
    expect(warm.map((res) => res.status)).toEqual(Array(8).fill(200));
    // The pool drops a client whose connection failed while idle ('error', then 'remove').
    const pool = poolOf(app.dataSource);
    let removed = 0;
    const onRemove = () => removed++;
    pool.on('remove', onRemove);
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    let count: number;
    try {
      const terminated = await admin.query<{ count: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS count FROM pg_stat_activity
         WHERE application_name = 'module-admin-service' AND datname = current_database()
           AND pid <> pg_backend_pid() AND state = 'idle'`,
      );
      count = terminated.rows[0].count;
      expect(count).toBeGreaterThan(0);
      // The pool's 'error' events for those idle clients must not crash the process.
      await waitFor(() => removed >= count, {
        timeoutMs: 5000,
        what: `the pool to drop the ${count} terminated connections`,
      });
    } finally {
      pool.off('remove', onRemove);
      await admin.end();
    }
    const after = await Promise.all(Array.from({ length: 12 }, () => api.get('/api/users', { token })));
    expect(after.map((res) => res.status)).toEqual(Array(12).fill(200));
    expect((await api.get('/api/health/ready')).status).toBe(200);
  });
});
