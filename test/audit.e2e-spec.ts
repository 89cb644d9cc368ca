// The audit trail: reading it (GET /api/audit) and what each write records.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import { AuditService } from '../src/audit/audit.service.js';
import { useTestApp } from './support/app.js';
import { auditEvents } from './support/csv.js';
import { DEFAULT_PASSWORD } from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';
import {
  assignRole,
  failure,
  makeModule,
  makeUser,
  ModuleRole,
  tokenFor,
  type UserRow,
} from './support/modules-fixtures.js';
import { image, uploadFile } from './support/users-helpers.js';

describe('Audit trail (GET /api/audit)', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let token: string;

  const insert = (
    at: string,
    actor: number | null,
    action: string,
    targetType: string | null,
    targets: number[],
  ) =>
    app.dataSource.query(
      `INSERT INTO audit_events (at, actor_id, action, target_type, target_ids, summary, request_id, client_ip)
       VALUES ($1, $2, $3, $4, $5::bigint[], '{"k":1}', 'req-1', '10.0.0.1')`,
      [at, actor, action, targetType, targets],
    );

  beforeEach(async () => {
    await app.reset();
    admin = await makeUser(app.dataSource, { admin: true, username: 'root' });
    token = tokenFor(admin);
    await insert('2026-01-01T00:00:00.000Z', admin.id, 'module.create', 'module', [10]);
    await insert('2026-02-01T00:00:00.000Z', admin.id, 'user.bulk_create', 'user', [20, 21]);
    await insert('2026-03-01T00:00:00.000Z', null, 'auth.login_failed', 'user', [21]);
    await insert('2026-03-01T00:00:00.000Z', null, 'auth.login_throttled', null, []);
  });

  const list = (query = '') => api.get(`/api/audit${query}`, { token });
  const actions = (res: { body: { data: { events: { action: string }[] } } }) =>
    res.body.data.events.map((event) => event.action);

  it('pages events newest first, ties broken by id descending', async () => {
    const res = await list('?per_page=2');
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Audit events retrieved successfully');
    expect(res.body.data).toMatchObject({ page: 1, per_page: 2, total: 4 });
    expect(res.body.data.events[0]).toEqual({
      id: expect.any(Number),
      at: '2026-03-01T00:00:00.000Z',
      actor_id: null,
      action: 'auth.login_throttled',
      target_type: null,
      target_ids: [],
      summary: { k: 1 },
      request_id: 'req-1',
      client_ip: '10.0.0.1',
    });
    expect(actions(res)).toEqual(['auth.login_throttled', 'auth.login_failed']);
    expect(actions(await list('?sort=at'))).toEqual([
      'module.create',
      'user.bulk_create',
      'auth.login_failed',
      'auth.login_throttled',
    ]);
    expect((await list('?page=3&per_page=2')).body.data).toMatchObject({ events: [], total: 4, page: 3 });
  });

  it('filters by actor, actions, target and time range, combined with AND', async () => {
    expect(actions(await list(`?actor_id=${admin.id}`))).toEqual(['user.bulk_create', 'module.create']);
    expect(actions(await list('?action=module.create, auth.login_failed'))).toEqual([
      'auth.login_failed',
      'module.create',
    ]);
    expect(actions(await list('?target_type=user&target_id=21'))).toEqual([
      'auth.login_failed',
      'user.bulk_create',
    ]);
    expect(actions(await list('?from=2026-01-15T00:00:00Z&to=2026-02-15T00:00:00%2B01:00'))).toEqual([
      'user.bulk_create',
    ]);
    expect((await list(`?actor_id=${admin.id}&target_type=module`)).body.data.total).toBe(1);
  });

  it.each([
    ['?action=module.explode', 'Invalid audit action'],
    ['?action=module.create,nope', 'Invalid audit action'],
    ['?from=yesterday', 'from must be an RFC 3339 timestamp'],
    ['?to=2026-13-01T00:00:00Z', 'to must be an RFC 3339 timestamp'],
    ['?actor_id=abc', 'actor_id must be a positive integer'],
    ['?target_type=assignment', 'target_type must be one of module, user, webhook, token'],
    ['?sort=action', 'Invalid field used for sorting'],
    ['?per_page=x', 'per_page must be an integer'],
  ])('answers 400 to %s', async (query, message) => {
    expect(await list(query)).toMatchObject({ status: 400, body: failure(message) });
  });

  it('is for admins only, and offers no way to change or delete events', async () => {
    const user = await makeUser(app.dataSource);
    expect(await api.get('/api/audit', { token: tokenFor(user) })).toMatchObject({ status: 403 });
    expect(await api.get('/api/audit')).toMatchObject({ status: 401 });
    for (const method of ['POST', 'PUT', 'DELETE'])
      expect(await api.request(method, '/api/audit', { token, body: {} })).toMatchObject({
        status: 404,
        body: failure('Route not found'),
      });
  });

  it('prunes events older than the retention period', async () => {
    const audit = app.service.app.get(AuditService);
    await insert(new Date(Date.now() - 400 * 86_400_000).toISOString(), null, 'user.create', 'user', [1]);
    await insert(new Date(Date.now() - 10 * 86_400_000).toISOString(), null, 'user.delete', 'user', [1]);
    const before = (await list()).body.data.total;
    const pruned = await audit.prune(new Date());
    const after = (await list()).body.data.total;
    expect(before - after).toBe(pruned);
    expect(actions(await list('?action=user.create,user.delete'))).toEqual(['user.delete']);
  });
});

describe('Audit retention of 0 days', () => {
  const { app } = useTestApp({ auditRetentionDays: 0 });

  it('keeps every event', async () => {
    await app.reset();
    await app.dataSource.query(
      `INSERT INTO audit_events (at, action) VALUES (now() - interval '20 years', 'user.create')`,
    );
    expect(await app.service.app.get(AuditService).prune()).toBe(0);
    expect((await app.dataSource.query(`SELECT count(*) AS n FROM audit_events`))[0].n).toBe(1);
  });
});

/** Every change made through the API leaves one event in its transaction; a failed request leaves none. */
describe('Audit events written by changes', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let token: string;

  beforeEach(async () => {
    ({ admin, token } = await freshAdmin(app, { username: 'root' }));
  });

  const only = async (action: string) => {
    const events = await auditEvents(app.dataSource);
    expect(events.map((event) => event.action)).toEqual([action]);
    expect(events[0].request_id).toEqual(expect.any(String));
    expect(events[0].client_ip).toBe('127.0.0.1');
    return events[0];
  };
  const none = async () => expect(await auditEvents(app.dataSource)).toEqual([]);

  describe('modules', () => {
    const body = { code: 'CSC101', year: 2026, description: 'Intro', credits: 15 };

    it('module.create with the fields; none for a clash or a bad body', async () => {
      const res = await api.post('/api/modules', { token, body });
      expect(res.status).toBe(201);
      expect(await only('module.create')).toMatchObject({
        actor_id: Number(admin.id),
        target_type: 'module',
        target_ids: [String(res.body.data.id)],
        summary: { code: 'CSC101', year: 2026, description: 'Intro', credits: 15 },
      });
      await app.dataSource.query(`TRUNCATE audit_events`);
      expect((await api.post('/api/modules', { token, body })).status).toBe(409);
      expect((await api.post('/api/modules', { token, body: { ...body, year: 1 } })).status).toBe(400);
      await none();
    });

    it('module.update with only the changed fields as {from, to}; none for a 404', async () => {
      const mod = await makeModule(app.dataSource, {
        code: 'CSC101',
        year: 2026,
        description: 'Intro',
        credits: 15,
      });
      const res = await api.put(`/api/modules/${mod.id}`, { token, body: { ...body, credits: 20 } });
      expect(res.status).toBe(200);
      expect(await only('module.update')).toMatchObject({
        target_ids: [String(mod.id)],
        summary: { credits: { from: 15, to: 20 } },
      });
      await app.dataSource.query(`TRUNCATE audit_events`);
      expect((await api.put(`/api/modules/999999999`, { token, body })).status).toBe(404);
      await none();
    });

    it('module.delete and module.bulk_delete name every deleted module', async () => {
      const [a, b, c] = [
        await makeModule(app.dataSource),
        await makeModule(app.dataSource),
        await makeModule(app.dataSource),
      ];
      expect((await api.delete(`/api/modules/${a.id}`, { token })).status).toBe(200);
      expect(await only('module.delete')).toMatchObject({
        target_ids: [String(a.id)],
        summary: { modules: [{ code: a.code, year: a.year }] },
      });
      await app.dataSource.query(`TRUNCATE audit_events`);
      expect(
        (await api.delete('/api/modules/bulk', { token, body: { module_ids: [b.id, 999999999, c.id] } }))
          .status,
      ).toBe(200);
      const bulk = await only('module.bulk_delete');
      expect(bulk.target_ids).toEqual([String(b.id), String(c.id)]);
      await app.dataSource.query(`TRUNCATE audit_events`);
      expect((await api.delete(`/api/modules/${a.id}`, { token })).status).toBe(404);
      expect(
        (await api.delete('/api/modules/bulk', { token, body: { module_ids: [999999999] } })).status,
      ).toBe(200);
      await none();
    });

    it('module.rollover names the created modules with the years and counts; none for a dry run, a refusal or a rerun', async () => {
      const source = await makeModule(app.dataSource, { code: 'CSC101', year: 2026 });
      const lecturer = await makeUser(app.dataSource);
      await assignRole(app.dataSource, lecturer.id, source.id, ModuleRole.Lecturer);
      const rollover = (body: object, query = '') =>
        api.post(`/api/modules/rollover${query}`, { token, body });
      const body = { from_year: 2026, to_year: 2027, codes: ['CSC101', 'CSC999'] };
      expect((await rollover(body, '?dry_run=true')).status).toBe(200);
      expect((await rollover({ ...body, to_year: 2026 })).status).toBe(400);
      await none();
      const res = await rollover(body);
      expect(res.status).toBe(201);
      expect(await only('module.rollover')).toMatchObject({
        actor_id: Number(admin.id),
        target_type: 'module',
        target_ids: [String(res.body.data.modules[0].to_id)],
        summary: { from_year: 2026, to_year: 2027, created: 1, existing: 0, missing: 1, members_copied: 1 },
      });
      await app.dataSource.query(`TRUNCATE audit_events`);
      expect((await rollover(body)).body.data).toMatchObject({ created: 0, members_copied: 0 });
      await none();
    });
  });

  describe('personnel and students', () => {
    it('writes {role, user_ids} for each group change, none for a refused one', async () => {
      const mod = await makeModule(app.dataSource);
      const user = await makeUser(app.dataSource);
      const path = `/api/modules/${mod.id}`;
      const steps: [string, string, object, string, string][] = [
        ['POST', 'personnel', { user_ids: [user.id], role: 'tutor' }, 'personnel.assign', 'Tutor'],
        ['DELETE', 'personnel', { user_ids: [user.id], role: 'Tutor' }, 'personnel.remove', 'Tutor'],
        ['POST', 'students', { user_ids: [user.id] }, 'students.enrol', 'Student'],
        ['DELETE', 'students', { user_ids: [user.id] }, 'students.remove', 'Student'],
      ];
      for (const [method, route, body, action, role] of steps) {
        await app.dataSource.query(`TRUNCATE audit_events`);
        expect((await api.request(method, `${path}/${route}`, { token, body })).status).toBe(200);
        expect(await only(action)).toMatchObject({
          target_type: 'module',
          target_ids: [String(mod.id)],
          summary: { role, user_ids: [Number(user.id)] },
        });
      }
      await app.dataSource.query(`TRUNCATE audit_events`);
      expect((await api.delete(`${path}/students`, { token, body: { user_ids: [user.id] } })).status).toBe(
        409,
      );
      expect((await api.post(`${path}/students`, { token, body: { user_ids: [999999999] } })).status).toBe(
        404,
      );
      const student = await makeUser(app.dataSource);
      await assignRole(app.dataSource, student.id, mod.id, ModuleRole.Student);
      expect(
        (await api.post(`${path}/students`, { token: tokenFor(student), body: { user_ids: [user.id] } }))
          .status,
      ).toBe(403);
      await none();
    });
  });

  describe('users', () => {
    it('user.create and user.bulk_create with usernames (and admin where true)', async () => {
      const res = await api.post('/api/users', {
        token,
        body: { username: 'ann', email: 'ann@example.edu', password: 'long-enough-1', admin: true },
      });
      expect(res.status).toBe(201);
      const created = await only('user.create');
      expect(created).toMatchObject({
        target_type: 'user',
        target_ids: [String(res.body.data.id)],
        summary: { username: 'ann', admin: true },
      });
      expect(JSON.stringify(created)).not.toContain('long-enough-1');
      await app.dataSource.query(`TRUNCATE audit_events`);
      const bulk = await api.post('/api/users/bulk', {
        token,
        body: {
          users: [
            { username: 'bob', email: 'bob@example.edu', password: 'long-enough-1' },
            { username: 'cid', email: 'cid@example.edu', password: 'long-enough-1', admin: true },
          ],
        },
      });
      expect(bulk.status).toBe(201);
      expect(await only('user.bulk_create')).toMatchObject({
        target_ids: bulk.body.data.map((user: { id: number }) => String(user.id)),
        summary: { users: [{ username: 'bob' }, { username: 'cid', admin: true }] },
      });
      await app.dataSource.query(`TRUNCATE audit_events`);
      expect(
        (
          await api.post('/api/users', {
            token,
            body: { username: 'ann', email: 'x@example.edu', password: 'long-enough-1' },
          })
        ).status,
      ).toBe(409);
      expect(
        (
          await api.post('/api/users/bulk', {
            token,
            body: { users: [{ username: 'bob', email: 'z@example.edu', password: 'long-enough-1' }] },
          })
        ).status,
      ).toBe(409);
      await none();
    });

    it('user.update with the changed fields, a password as "changed"; none when refused', async () => {
      const user = await makeUser(app.dataSource, { username: 'ann', email: 'ann@example.edu' });
      const res = await api.put(`/api/users/${user.id}`, {
        token,
        body: { email: 'ann@example.edu', admin: true, password: 'another-password' },
      });
      expect(res.status).toBe(200);
      const event = await only('user.update');
      expect(event).toMatchObject({
        target_ids: [String(user.id)],
        summary: { admin: { from: false, to: true }, password: 'changed' },
      });
      expect(JSON.stringify(event)).not.toContain('another-password');
      await app.dataSource.query(`TRUNCATE audit_events`);
      expect((await api.put(`/api/users/${admin.id}`, { token, body: { admin: false } })).status).toBe(403);
      expect((await api.put(`/api/users/${user.id}`, { token, body: { username: 'root' } })).status).toBe(
        409,
      );
      await none();
    });

    it('user.delete and user.avatar; none for deleting yourself or a bad file', async () => {
      const user = await makeUser(app.dataSource, { username: 'ann' });
      const upload = await uploadFile(app.url, user.id, image('png', 100), token);
      expect(upload.status).toBe(200);
      expect(await only('user.avatar')).toMatchObject({
        target_ids: [String(user.id)],
        summary: { content_type: 'image/png', size: 100 },
      });
      await app.dataSource.query(`TRUNCATE audit_events`);
      expect((await uploadFile(app.url, user.id, Buffer.from('not an image'), token)).status).toBe(415);
      expect((await api.delete(`/api/users/${admin.id}`, { token })).status).toBe(403);
      await none();
      expect((await api.delete(`/api/users/${user.id}`, { token })).status).toBe(200);
      expect(await only('user.delete')).toMatchObject({
        target_ids: [String(user.id)],
        summary: { username: 'ann' },
      });
    });
  });

  describe('authentication', () => {
    it('auth.password_change with nothing in the summary; none for a wrong current password', async () => {
      const user = await makeUser(app.dataSource);
      const as = tokenFor(user);
      expect(
        (
          await api.put('/api/auth/password', {
            token: as,
            body: { current_password: 'wrong-one', new_password: 'another-password' },
          })
        ).status,
      ).toBe(401);
      await none();
      expect(
        (
          await api.put('/api/auth/password', {
            token: as,
            body: { current_password: DEFAULT_PASSWORD, new_password: 'another-password' },
          })
        ).status,
      ).toBe(200);
      expect(await only('auth.password_change')).toMatchObject({
        actor_id: Number(user.id),
        target_ids: [String(user.id)],
        summary: {},
      });
    });

    it('auth.login_failed with the username as sent, no actor; none for a good login', async () => {
      const user = await makeUser(app.dataSource, { username: 'ann' });
      expect(
        (await api.post('/api/auth/login', { body: { username: 'ann', password: DEFAULT_PASSWORD } })).status,
      ).toBe(200);
      await none();
      expect(
        (await api.post('/api/auth/login', { body: { username: 'ANN', password: 'wrong-password' } })).status,
      ).toBe(401);
      expect(await only('auth.login_failed')).toMatchObject({
        actor_id: null,
        target_type: 'user',
        target_ids: [String(user.id)],
        summary: { username: 'ANN' },
      });
      await app.dataSource.query(`TRUNCATE audit_events`);
      expect(
        (await api.post('/api/auth/login', { body: { username: 'ghost', password: 'wrong-password' } }))
          .status,
      ).toBe(401);
      expect(await only('auth.login_failed')).toMatchObject({
        target_type: null,
        target_ids: [],
        summary: { username: 'ghost' },
      });
    });

    it('auth.login_throttled once per window and key', async () => {
      await makeUser(app.dataSource, { username: 'ann' });
      for (let i = 0; i < 10; i++)
        await api.post('/api/auth/login', { body: { username: 'ann', password: 'wrong-password' } });
      expect(
        (await api.post('/api/auth/login', { body: { username: 'ann', password: 'wrong-password' } })).status,
      ).toBe(429);
      expect(
        (await api.post('/api/auth/login', { body: { username: 'ann', password: 'wrong-password' } })).status,
      ).toBe(429);
      const throttled = await auditEvents(app.dataSource, 'auth.login_throttled');
      expect(throttled.map((event) => event.summary)).toEqual([{ key: 'address' }, { key: 'username' }]);
      expect(throttled.every((event) => event.actor_id === null && event.target_type === null)).toBe(true);
      expect(await auditEvents(app.dataSource, 'auth.login_failed')).toHaveLength(10);
    });
  });
});
