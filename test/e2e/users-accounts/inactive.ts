// Part of test/users-accounts.e2e-spec.ts: inactive users, signing in with a password, a token or the IdP.
import { jest } from '@jest/globals';
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { type UsedTestApp } from '../../support/app.js';
import { advanceClock } from '../../support/clock.js';
import { auditEvents } from '../../support/csv.js';
import {
  assignRole,
  DEFAULT_PASSWORD,
  makeModule,
  makeUser,
  tokenFor,
  type UserRow,
} from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { failure } from '../../support/http.js';
import { useTestIdpAndApp } from '../../support/oidc-settings.js';

const INVALID_TOKEN = failure('Invalid or expired token');
const INVALID_CREDENTIALS = failure('Invalid username or password');

export function inactiveUsers({ app, api }: UsedTestApp): void {
  let admin: UserRow;
  let token: string;
  let jane: UserRow;

  beforeEach(async () => {
    ({ admin, token } = await freshAdmin(app, { username: 'root', email: 'root@example.edu' }));
    jane = await makeUser(app.dataSource, { username: 'jane', email: 'jane@example.edu' });
  });
  afterEach(() => jest.restoreAllMocks());

  const deactivate = (id: number, by = token) =>
    api.put(`/api/users/${id}`, { token: by, body: { active: false } });
  const login = (username: string, password = DEFAULT_PASSWORD) =>
    api.post('/api/auth/login', { body: { username, password } });

  describe('password login', () => {
    it('refuses an inactive user with the right password as 401 Invalid username or password, audited', async () => {
      expect((await deactivate(jane.id)).status).toBe(200);
      const res = await login('JANE');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID_CREDENTIALS);
      const failures = await auditEvents(app.dataSource, 'auth.login_failed');
      expect(failures).toEqual([
        expect.objectContaining({
          target_type: 'user',
          target_ids: [String(jane.id)],
          summary: { username: 'JANE' },
        }),
      ]);
    });

    it('counts those refusals in the throttle: the 11th attempt within 60 s is a 429', async () => {
      await deactivate(jane.id);
      for (let attempt = 0; attempt < 10; attempt++) expect((await login('jane')).status).toBe(401);
      const blocked = await login('jane');
      expect(blocked.status).toBe(429);
      expect(blocked.body.message).toBe('Too many requests, try again later');
    });

    it('lets the user sign in again once reactivated', async () => {
      await deactivate(jane.id);
      expect((await login('jane')).status).toBe(401);
      const back = await api.put(`/api/users/${jane.id}`, { token, body: { active: true } });
      expect(back.body.data.active).toBe(true);
      expect((await login('jane')).status).toBe(200);
    });
  });

  describe('tokens', () => {
    it("refuses the user's token at once when deactivated through this service", async () => {
      const own = tokenFor(jane);
      expect((await api.get('/api/auth/me', { token: own })).status).toBe(200);
      await deactivate(jane.id);
      for (const path of ['/api/auth/me', '/api/modules']) {
        const res = await api.get(path, { token: own });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(INVALID_TOKEN);
      }
    });

    it('refuses it within the 5 s user-check bound when deactivated elsewhere (another replica)', async () => {
      const own = tokenFor(jane);
      expect((await api.get('/api/auth/me', { token: own })).status).toBe(200);
      await app.dataSource.query(`UPDATE users SET active = false WHERE id = $1`, [jane.id]);
      advanceClock(app, app.config.userCacheTtlMs);
      const res = await api.get('/api/auth/me', { token: own });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID_TOKEN);
    });

    it("refuses an inactive admin's token on admin routes too", async () => {
      const other = await makeUser(app.dataSource, { admin: true });
      await deactivate(other.id);
      const res = await api.get('/api/users', { token: tokenFor(other) });
      expect(res).toMatchObject({ status: 401, body: INVALID_TOKEN });
    });
  });

  describe('deactivating', () => {
    it('refuses an admin deactivating themself with 403, changing nothing', async () => {
      const res = await deactivate(admin.id);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(failure('You cannot deactivate your own account'));
      const [row] = await app.dataSource.query(`SELECT active FROM users WHERE id = $1`, [admin.id]);
      expect(row.active).toBe(true);
      expect(await auditEvents(app.dataSource, 'user.update')).toEqual([]);
      // Setting themself active is no change of rights: allowed.
      expect((await api.put(`/api/users/${admin.id}`, { token, body: { active: true } })).status).toBe(200);
    });

    it('audits the change as user.update {active: {from, to}} and writes a user.updated event', async () => {
      const res = await deactivate(jane.id);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: jane.id, active: false });
      const [audit] = await auditEvents(app.dataSource, 'user.update');
      expect(audit).toMatchObject({
        actor_id: admin.id,
        target_type: 'user',
        target_ids: [String(jane.id)],
        summary: { active: { from: true, to: false } },
      });
      const events = await app.dataSource.query(`SELECT type, data FROM change_events ORDER BY id`);
      expect(events).toEqual([{ type: 'user.updated', data: res.body.data }]);
    });

    it('keeps memberships: member lists show the user with active false, eligible leaves them out', async () => {
      const module = await makeModule(app.dataSource);
      await assignRole(app.dataSource, jane.id, module.id, ModuleRole.Student);
      const bob = await makeUser(app.dataSource, { username: 'bob' });
      const carl = await makeUser(app.dataSource, { username: 'carl' });
      await deactivate(jane.id);
      await deactivate(carl.id);

      const students = await api.get(`/api/modules/${module.id}/students`, { token });
      expect(students.body.data.users.map((u: any) => [u.username, u.active])).toEqual([['jane', false]]);
      const single = await api.get(`/api/modules/${module.id}`, { token });
      expect(single.body.data.students.map((u: any) => [u.username, u.active])).toEqual([['jane', false]]);
      const modules = await api.get(`/api/users/${jane.id}/modules`, { token });
      expect(modules.body.data.map((m: any) => m.id)).toEqual([module.id]);

      const eligible = await api.get(`/api/modules/${module.id}/personnel/eligible`, { token });
      expect(eligible.body.data.users.map((u: any) => u.username)).toEqual(['bob', 'root']);
      expect(eligible.body.data.total).toBe(2);
      expect(bob.id).toBeGreaterThan(0);
    });
  });
}

export function inactiveUsersAndSso(): void {
  const { idp, app, api } = useTestIdpAndApp({ createUsers: true });
  beforeEach(() => app.reset());

  it("refuses an inactive user's IdP token and never creates the user again", async () => {
    const admin = await makeUser(app.dataSource, { admin: true });
    const leaver = await makeUser(app.dataSource, {
      username: 'jane.doe@uni.edu',
      email: 'jane.doe@uni.edu',
    });
    const idpToken = await idp.accessToken({
      preferred_username: 'jane.doe@uni.edu',
      email: 'jane.doe@uni.edu',
    });
    expect((await api.get('/api/auth/me', { token: idpToken })).body.data.id).toBe(leaver.id);

    const res = await api.put(`/api/users/${leaver.id}`, { token: tokenFor(admin), body: { active: false } });
    expect(res.status).toBe(200);
    expect(await api.get('/api/auth/me', { token: idpToken })).toMatchObject({
      status: 401,
      body: INVALID_TOKEN,
    });
    // A fresh token for the same person, even with another case of the name: refused, nobody created.
    const fresh = await idp.accessToken({
      preferred_username: 'Jane.Doe@uni.edu',
      email: 'jane.doe@uni.edu',
    });
    expect(await api.get('/api/auth/me', { token: fresh })).toMatchObject({
      status: 401,
      body: INVALID_TOKEN,
    });
    const users = await app.dataSource.query(
      `SELECT id, active FROM users WHERE lower(username) = 'jane.doe@uni.edu'`,
    );
    expect(users).toEqual([{ id: leaver.id, active: false }]);
    const created = await app.dataSource.query(`SELECT 1 FROM audit_events WHERE action = 'user.create'`);
    expect(created).toEqual([]);
  });
}
