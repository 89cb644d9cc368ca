// Part of test/modules-reads.e2e-spec.ts: the module reads when the database fails.
import pg from 'pg';
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import {
  type RunDatabase,
  scratchDatabase,
  startTestApp,
  type TestApp,
  testDatabaseUrl,
} from '../../support/app.js';
import { assignRole, makeModule, makeUser, tokenFor } from '../../support/factories.js';
import { client, type Client } from '../../support/http.js';
import { failure } from '../../support/modules-fixtures.js';

/**
 * Database failures answer each route's 500 message from the seed, and the service recovers without a
 * restart. The service runs on a database of its own, so blocking it affects nothing else.
 */
export function databaseFailureTests(): void {
  let database: RunDatabase;
  let admin: pg.Client;
  let name: string;
  let app: TestApp;
  let api: Client;
  let token: string;
  let moduleId: number;

  beforeAll(async () => {
    database = await scratchDatabase('mas_modules');
    name = database.name;
    admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    app = await startTestApp({ databaseUrl: database.url });
    api = client(app.url);
    const user = await makeUser(app.dataSource);
    const module = await makeModule(app.dataSource);
    await assignRole(app.dataSource, user.id, module.id, ModuleRole.Tutor);
    token = tokenFor(user);
    moduleId = Number(module.id);
  });
  afterAll(async () => {
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    await app.close();
    await admin.end();
  });

  const reads = () =>
    Promise.all([
      api.get('/api/modules', { token }),
      api.get('/api/modules/me', { token }),
      api.get(`/api/modules/${moduleId}`, { token }),
    ]);

  it('answers the seed messages while connections are refused, then recovers', async () => {
    // Served successfully first, which also puts the caller in the 5-second access cache.
    expect((await reads()).map((res) => res.status)).toEqual([200, 200, 200]);

    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name]);
    try {
      const [list, mine, read] = await reads();
      expect([list.status, list.body]).toEqual([500, failure('An internal server error occurred')]);
      expect([mine.status, mine.body]).toEqual([
        500,
        failure('An error occurred while retrieving module details'),
      ]);
      expect([read.status, read.body]).toEqual([500, failure('Database error retrieving module')]);
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    }

    const [list, mine, read] = await reads();
    expect([list.status, list.body.data.total]).toEqual([200, 1]);
    expect([mine.status, mine.body.data.as_tutor.length]).toEqual([200, 1]);
    expect([read.status, read.body.data.tutors.length]).toEqual([200, 1]);
  });

  it('answers Failed to retrieve assigned personnel when only the personnel query fails', async () => {
    expect((await api.get(`/api/modules/${moduleId}`, { token })).status).toBe(200);
    // The module read needs only modules and user_module_roles; the personnel query also needs users.
    const db = new pg.Client({ connectionString: app.config.databaseUrl });
    await db.connect();
    await db.query(`ALTER TABLE users RENAME TO users_hidden`);
    try {
      const res = await api.get(`/api/modules/${moduleId}`, { token });
      expect([res.status, res.body]).toEqual([500, failure('Failed to retrieve assigned personnel')]);
    } finally {
      await db.query(`ALTER TABLE users_hidden RENAME TO users`);
      await db.end();
    }
    const res = await api.get(`/api/modules/${moduleId}`, { token });
    expect([res.status, res.body.message]).toEqual([200, 'Module retrieved successfully']);
  });

  it('never shows SQL or driver text in a 500', async () => {
    await api.get('/api/modules', { token });
    const db = new pg.Client({ connectionString: app.config.databaseUrl });
    await db.connect();
    await db.query(`ALTER TABLE modules RENAME TO modules_hidden`);
    try {
      for (const path of ['/api/modules?query=x', '/api/modules/me', `/api/modules/${moduleId}`]) {
        const res = await api.get(path, { token });
        expect(res.status).toBe(500);
        expect(Object.keys(res.body).sort()).toEqual(['data', 'message', 'success']);
        expect(JSON.stringify(res.body)).not.toMatch(/modules_hidden|relation|SELECT|does not exist/i);
      }
    } finally {
      await db.query(`ALTER TABLE modules_hidden RENAME TO modules`);
      await db.end();
    }
  });
}
