// Part of test/sso.e2e-spec.ts: a token the provider issued.
import { decodeJwt } from 'jose';
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { assignRole, DEFAULT_PASSWORD, makeModule, makeUser, tokenFor } from '../../support/factories.js';
import { TEST_AUDIENCE } from '../../support/idp.js';
import { eventually } from '../../support/users-helpers.js';
import { bindUser, expectNoAccount, INVALID, NO_ACCOUNT, type SsoContext } from './context.js';

export function issuedTokenTests(ctx: SsoContext): void {
  const { app, api, idp } = ctx;

  describe('a token the provider issued', () => {
    it('is a JWT for the audience, signed with the key the discovery document points at', async () => {
      const token = await idp.accessToken({ preferred_username: 'jdoe' });
      const claims = decodeJwt(token);
      expect(claims).toMatchObject({ iss: idp.issuer, aud: TEST_AUDIENCE, preferred_username: 'jdoe' });
    });

    it('works on every kind of route for an existing user, named case-insensitively', async () => {
      const user = await makeUser(app.dataSource, { username: 'Jane.Doe' });
      const module = await makeModule(app.dataSource);
      await assignRole(app.dataSource, user.id, module.id, ModuleRole.Lecturer);
      const token = await idp.accessToken({ preferred_username: 'jane.DOE', email: 'other@example.edu' });

      expect((await api.get('/api/health', { token })).status).toBe(200);
      const me = await api.get('/api/auth/me', { token });
      expect(me.status).toBe(200);
      expect(me.body.data).toMatchObject({
        id: user.id,
        username: 'Jane.Doe',
        email: user.email,
        admin: false,
      });
      const personnel = await api.get(`/api/modules/${module.id}/personnel`, { token });
      expect(personnel.status).toBe(200);
      const mine = await api.get('/api/modules/me', { token });
      expect(mine.status).toBe(200);
      expect(JSON.stringify(mine.body.data)).toContain(`"code":"${module.code}"`);
      // Not an administrator here: the admin route says so.
      expect((await api.get('/api/users', { token })).status).toBe(403);
      // A module this user has no role in.
      const other = await makeModule(app.dataSource);
      expect((await api.get(`/api/modules/${other.id}/personnel`, { token })).status).toBe(403);
    });

    it('grants admin rights from the local flag alone, never from the token', async () => {
      const admin = await makeUser(app.dataSource, { username: 'boss', admin: true });
      await bindUser(app, admin.id, idp.issuer, 'person-boss');
      const plain = await makeUser(app.dataSource, { username: 'pleb' });
      const adminToken = await idp.accessToken({ preferred_username: 'boss' });
      const claimsAdmin = await idp.accessToken({
        preferred_username: 'pleb',
        admin: true,
        groups: ['admins'],
      });

      const list = await api.get('/api/users', { token: adminToken });
      expect(list.status).toBe(200);
      expect(list.body.data.users.map((u: { id: number }) => u.id).sort()).toEqual(
        [admin.id, plain.id].sort(),
      );
      expect(await api.get('/api/users', { token: claimsAdmin })).toMatchObject({
        status: 403,
        body: { message: 'You do not have permission to perform this action' },
      });
      const created = await api.post('/api/modules', {
        token: adminToken,
        body: { code: 'SSO101', year: 2026, credits: 15 },
      });
      expect(created.status).toBe(201);
    });

    it('creates an unknown person on first sight, once, with an audit event naming the route "sso"', async () => {
      const tokens = await Promise.all([
        idp.accessToken({ preferred_username: 'New.Person', email: 'New.Person@Example.edu' }),
      ]);
      const token = tokens[0];
      // Concurrent first requests: one user.
      const answers = await Promise.all(Array.from({ length: 8 }, () => api.get('/api/auth/me', { token })));
      expect(answers.map((res) => res.status)).toEqual(Array(8).fill(200));
      const ids = new Set(answers.map((res) => res.body.data.id));
      expect(ids.size).toBe(1);
      expect(answers[0].body.data).toMatchObject({
        username: 'New.Person',
        email: 'new.person@example.edu',
        admin: false,
        avatar_url: null,
      });
      const rows = await app.dataSource.query(
        `SELECT id, password_hash FROM users WHERE username = 'New.Person'`,
      );
      expect(rows).toEqual([{ id: answers[0].body.data.id, password_hash: null }]);
      const events = await app.dataSource.query(
        `SELECT actor_id, action, target_type, target_ids, summary FROM audit_events`,
      );
      expect(events).toEqual([
        {
          actor_id: null,
          action: 'user.create',
          target_type: 'user',
          target_ids: [String(answers[0].body.data.id)],
          summary: { username: 'New.Person', via: 'sso' },
        },
      ]);
      // And one change event for systems that follow the feed (docs/events.md).
      const changes = await app.dataSource.query(`SELECT type, data FROM change_events`);
      expect(changes).toEqual([{ type: 'user.created', data: answers[0].body.data }]);
      // No password login for such a user, whatever is sent.
      const login = await api.post('/api/auth/login', {
        body: { username: 'new.person', password: 'anything-at-all' },
      });
      expect(login.status).toBe(401);
      // A second token of the same person is the same user.
      const again = await idp.accessToken({
        preferred_username: 'new.person',
        email: 'new.person@example.edu',
      });
      expect((await api.get('/api/auth/me', { token: again })).body.data.id).toBe(answers[0].body.data.id);
    });

    it('cannot create a person without an email claim, or one whose email belongs to someone else', async () => {
      await makeUser(app.dataSource, { username: 'taken', email: 'taken@example.edu' });
      const noEmail = await idp.accessToken({ preferred_username: 'no.email' });
      expect((await api.get('/api/auth/me', { token: noEmail })).body).toEqual(NO_ACCOUNT);
      const clash = await idp.accessToken({ preferred_username: 'someone', email: 'TAKEN@example.edu' });
      await expectNoAccount(api, clash);
      const badName = await idp.accessToken({ preferred_username: 'jane doe@uni', email: 'jd@example.edu' });
      await expectNoAccount(api, badName);
      const count = await app.dataSource.query(`SELECT count(*)::int AS n FROM users`);
      expect(count).toEqual([{ n: 1 }]);
      expect(await app.dataSource.query(`SELECT * FROM audit_events`)).toEqual([]);
    });

    it('answers 401 when the username claim is missing or not a string', async () => {
      for (const claims of [
        {},
        { preferred_username: 42 },
        { preferred_username: ['jdoe'] },
        { preferred_username: '' },
      ]) {
        const token = await idp.accessToken(claims);
        expect(await api.get('/api/auth/me', { token })).toMatchObject({ status: 401, body: INVALID });
      }
    });

    it("refuses a deleted user's token within the user cache bound", async () => {
      const user = await makeUser(app.dataSource, { username: 'leaver' });
      const admin = await makeUser(app.dataSource, { admin: true });
      const token = await idp.accessToken({ preferred_username: 'leaver', email: 'leaver@example.edu' });
      expect((await api.get('/api/auth/me', { token })).status).toBe(200);
      expect((await api.delete(`/api/users/${user.id}`, { token: tokenFor(admin) })).status).toBe(200);
      await eventually(async () => (await api.get('/api/auth/me', { token })).status === 401, 6000);
      expect((await api.get('/api/auth/me', { token })).body).toEqual(INVALID);
    });

    it('refuses a password change for a single-sign-on account, and allows one for a user with a password', async () => {
      const token = await idp.accessToken({ preferred_username: 'sso.only', email: 'sso.only@example.edu' });
      const res = await api.put('/api/auth/password', {
        token,
        body: { current_password: 'whatever-it-is', new_password: 'a-new-password' },
      });
      expect(res).toMatchObject({
        status: 400,
        body: { success: false, data: null, message: 'This account signs in with single sign-on' },
      });

      await makeUser(app.dataSource, { username: 'both' });
      const both = await idp.accessToken({ preferred_username: 'both' });
      const changed = await api.put('/api/auth/password', {
        token: both,
        body: { current_password: DEFAULT_PASSWORD, new_password: 'a-new-password' },
      });
      expect(changed.status).toBe(200);
      // The IdP's token is not ended by a password change here; the service's earlier tokens are.
      expect((await api.get('/api/auth/me', { token: both })).status).toBe(200);
    });

    it("keeps the service's own tokens working beside the IdP's", async () => {
      const user = await makeUser(app.dataSource);
      const login = await api.post('/api/auth/login', {
        body: { username: user.username, password: DEFAULT_PASSWORD },
      });
      expect(login.status).toBe(200);
      expect((await api.get('/api/auth/me', { token: login.body.data.token })).body.data.id).toBe(user.id);
    });
  });
}
