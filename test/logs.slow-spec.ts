import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { TEST_JWT_SECRET, testDatabaseUrl } from './support/app.js';
import { type Database, makeUser, type UserRow } from './support/factories.js';
import { client } from './support/http.js';
import { type ServiceProcess, serviceEnv, startServiceProcess } from './support/processes.js';
import { waitFor } from './support/wait-for.js';

/**
 * The service as a process with its real JSON log on stdout, against the test database: every line of a
 * request carries its request id and, once the token is checked, the caller's id (a 500's stack included);
 * no token, password or password hash is ever written; no SQL, stack or driver text reaches a response.
 */
const PASSWORD = 'log-test-password-🔑-0123';
const NEW_USER_PASSWORD = 'brand-new-user-password-4567';
const BOOTSTRAP_PASSWORD = 'log-bootstrap-password-89';

describe('logs', () => {
  let service: ServiceProcess | undefined;
  /** Everything the service wrote so far. */
  const output = () => service?.output() ?? '';
  let url: string;
  let dataDir: string;
  let db: pg.Client;
  let admin: UserRow;

  beforeAll(async () => {
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-logs-'));
    service = await startServiceProcess(
      serviceEnv({
        DATABASE_URL: testDatabaseUrl(),
        DATA_DIR: dataDir,
        JWT_SECRET: TEST_JWT_SECRET,
        ADMIN_PASSWORD: BOOTSTRAP_PASSWORD,
        DB_STATEMENT_TIMEOUT_MS: '400',
      }),
      40_000,
    );
    ({ url } = service);
    // After the start: the service has migrated the database by then.
    const database: Database = {
      query: async <T>(sql: string, params?: unknown[]) => {
        const rows: unknown = (await db.query(sql, params)).rows;
        return rows as T;
      },
    };
    // A name of its own: this service's database keeps the users earlier test files of the run made.
    admin = await makeUser(database, {
      admin: true,
      password: PASSWORD,
      username: `log-admin-${process.pid}`,
    });
  });

  afterAll(async () => {
    service?.child.kill('SIGKILL');
    await db?.end();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('names request and caller on every line, 500 stack included, and never writes a secret', async () => {
    const api = client(url);
    const failed = await api.post('/api/auth/login', {
      body: { username: admin.username, password: 'wrong-password-for-the-log' },
      headers: { 'x-request-id': 'log-login-failed' },
    });
    expect(failed.status).toBe(401);
    const login = await api.post('/api/auth/login', {
      body: { username: admin.username, password: PASSWORD },
      headers: { 'x-request-id': 'log-login' },
    });
    expect(login.status).toBe(200);
    const token: string = login.body.data.token;
    const created = await api.post('/api/users', {
      token,
      body: {
        username: `logged${process.pid}`,
        email: `logged${process.pid}@example.edu`,
        password: NEW_USER_PASSWORD,
      },
      headers: { 'x-request-id': 'log-create-user' },
    });
    expect(created.status).toBe(201);
    expect((await api.get('/api/auth/me', { token, headers: { 'x-request-id': 'log-me' } })).status).toBe(
      200,
    );

    // A real database failure: the table is locked until the statement timeout (400 ms) cancels the query.
    await db.query('BEGIN');
    await db.query('LOCK TABLE modules IN ACCESS EXCLUSIVE MODE');
    let broken;
    try {
      broken = await api.get('/api/modules', { token, headers: { 'x-request-id': 'log-500' } });
    } finally {
      await db.query('ROLLBACK');
    }
    expect(broken.status).toBe(500);
    expect(broken.body).toEqual({ success: false, data: null, message: expect.any(String) });
    expect(JSON.stringify(broken.body)).not.toMatch(
      /select|from |statement|timeout|canceling|query|\bat \S+:\d+|error:/i,
    );

    const parsed = () =>
      output()
        .split('\n')
        .slice(0, -1) // the last piece is an unfinished line, or empty
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, any>);
    // The 500's last line is written once its answer has gone: wait for it, not for a time.
    const lines = await waitFor(
      () => {
        const all = parsed();
        return all.some((line) => line.reqId === 'log-500' && line.msg === 'request completed') && all;
      },
      { timeoutMs: 5000, what: "the 500's 'request completed' log line" },
    );
    const of = (reqId: string) => lines.filter((line) => line.reqId === reqId);

    // Each authenticated request: its lines all carry the request id and the caller.
    for (const reqId of ['log-create-user', 'log-me', 'log-500']) {
      expect(of(reqId).length).toBeGreaterThan(0);
      for (const line of of(reqId)) expect(line.userId).toBe(Number(admin.id));
    }
    const failure = of('log-500').find((line) => line.level === 50);
    expect(failure).toBeDefined();
    expect(failure!.err.stack).toMatch(/\n\s+at /);
    expect(of('log-500').find((line) => line.msg === 'request completed')?.statusCode).toBe(500);
    // Unauthenticated requests still carry their id, and no caller.
    expect(of('log-login-failed').length).toBeGreaterThan(0);
    for (const line of of('log-login-failed')) expect(line.userId).toBeUndefined();

    // No secret anywhere in the log.
    const hashes = (
      await db.query<{ password_hash: string }>(
        // Real hashes only: rows other test files inserted straight into the shared table carry placeholders.
        `SELECT password_hash FROM users WHERE password_hash LIKE '$argon2%' OR password_hash LIKE 'sha256$%'`,
      )
    ).rows;
    for (const secret of [
      token,
      PASSWORD,
      NEW_USER_PASSWORD,
      BOOTSTRAP_PASSWORD,
      'wrong-password-for-the-log',
    ]) {
      expect(output()).not.toContain(secret);
    }
    for (const { password_hash } of hashes) expect(output()).not.toContain(password_hash);
    expect(output()).not.toContain('$argon2');
    expect(output().toLowerCase()).not.toContain('bearer');
  });
});
