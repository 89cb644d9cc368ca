import { SignJWT, base64url, decodeJwt } from 'jose';
import { startTestApp, type TestApp } from './support/app.js';
import {
  assignRole,
  DEFAULT_PASSWORD,
  makeModule,
  makeUser,
  tokenFor,
  unsignedToken,
} from './support/factories.js';
import { client, type Client } from './support/http.js';
import { CONSOLE_CLIENT_ID, makeSigningKey, TEST_AUDIENCE, TestIdp, freePort } from './support/idp.js';
import { eventually } from './support/users-helpers.js';
import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import { AdminBootstrap } from '../src/auth/admin-bootstrap.js';

const INVALID = { success: false, data: null, message: 'Invalid or expired token' };
const NO_ACCOUNT = { success: false, data: null, message: 'No account for this identity' };

/** Binds the user to `(issuer, subject)` directly in the database, as if linked earlier. */
async function bindUser(app: TestApp, id: number, issuer: string, subject: string): Promise<void> {
  await app.dataSource.query(`UPDATE users SET sso_issuer = $2, sso_subject = $3 WHERE id = $1`, [
    id,
    issuer,
    subject,
  ]);
}

function oidcSettings(issuer: string, overrides: Record<string, unknown> = {}) {
  return {
    oidc: {
      issuer,
      audience: TEST_AUDIENCE,
      usernameClaim: 'preferred_username',
      createUsers: false,
      clientId: undefined,
      scopes: ['openid', 'profile', 'email'],
      maxTokenAgeS: 86_400,
      refetchCooldownMs: 30_000,
      ...overrides,
    },
  };
}

describe('single sign-on with a real OpenID provider (docs/sso.md)', () => {
  let idp: TestIdp;
  let app: TestApp;
  let api: Client;

  beforeAll(async () => {
    idp = await TestIdp.start();
    app = await startTestApp(oidcSettings(idp.issuer, { createUsers: true, clientId: CONSOLE_CLIENT_ID }));
    api = client(app.url);
  });
  afterAll(async () => {
    await app?.close();
    await idp?.stop();
  });
  beforeEach(() => app.reset());

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
      expect(await api.get('/api/auth/me', { token: clash })).toMatchObject({
        status: 403,
        body: NO_ACCOUNT,
      });
      const badName = await idp.accessToken({ preferred_username: 'jane doe@uni', email: 'jd@example.edu' });
      expect(await api.get('/api/auth/me', { token: badName })).toMatchObject({
        status: 403,
        body: NO_ACCOUNT,
      });
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

  describe("binding a user to the IdP's (iss, sub)", () => {
    const bindingOf = async (id: number) =>
      (await app.dataSource.query(`SELECT sso_issuer, sso_subject FROM users WHERE id = $1`, [id]))[0] as {
        sso_issuer: string | null;
        sso_subject: string | null;
      };

    it('binds on first sign-in; a renamed account still reaches its user; another sub naming it gets 403', async () => {
      const anna = await makeUser(app.dataSource, { username: 'anna' });
      const first = await idp.accessToken({ preferred_username: 'Anna', sub: 'subject-of-anna' });
      expect((await api.get('/api/auth/me', { token: first })).body.data.id).toBe(anna.id);
      expect(await bindingOf(anna.id)).toEqual({ sso_issuer: idp.issuer, sso_subject: 'subject-of-anna' });

      // Renamed at the IdP: the sub still names her.
      const renamed = await idp.accessToken({ preferred_username: 'anna.married', sub: 'subject-of-anna' });
      expect((await api.get('/api/auth/me', { token: renamed })).body.data.id).toBe(anna.id);

      // The username handed to someone else at the IdP: no takeover, nothing created (OIDC_CREATE_USERS is on).
      const impostor = await idp.accessToken({
        preferred_username: 'anna',
        sub: 'subject-of-someone-else',
        email: 'new.anna@example.edu',
      });
      expect(await api.get('/api/auth/me', { token: impostor })).toMatchObject({
        status: 403,
        body: NO_ACCOUNT,
      });
      expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM users`)).toEqual([{ n: 1 }]);
      expect(await bindingOf(anna.id)).toEqual({ sso_issuer: idp.issuer, sso_subject: 'subject-of-anna' });
    });

    it('answers 401 for a token without a sub, and for a bound sub without the username claim', async () => {
      const bob = await makeUser(app.dataSource, { username: 'bob' });
      for (const sub of [undefined, '', 42]) {
        const token = await idp.mint({ preferred_username: 'bob', sub });
        expect(await api.get('/api/auth/me', { token })).toMatchObject({ status: 401, body: INVALID });
      }
      expect(await bindingOf(bob.id)).toEqual({ sso_issuer: null, sso_subject: null });
      const bound = await idp.accessToken({ preferred_username: 'bob', sub: 'subject-of-bob' });
      expect((await api.get('/api/auth/me', { token: bound })).status).toBe(200);
      const nameless = await idp.accessToken({ sub: 'subject-of-bob' });
      expect(await api.get('/api/auth/me', { token: nameless })).toMatchObject({
        status: 401,
        body: INVALID,
      });
    });

    it('never binds an inactive user: a recycled username does not inherit the account on reactivation', async () => {
      const admin = await makeUser(app.dataSource, { admin: true });
      const dana = await makeUser(app.dataSource, { username: 'dana' });
      const deactivated = await api.put(`/api/users/${dana.id}`, {
        token: tokenFor(admin),
        body: { active: false },
      });
      expect(deactivated.status).toBe(200);
      // The IdP handed the username to someone else meanwhile: refused, and bound to nobody.
      const newcomer = await idp.accessToken({
        preferred_username: 'dana',
        sub: 'subject-of-new-dana',
        email: 'new.dana@example.edu',
      });
      expect(await api.get('/api/auth/me', { token: newcomer })).toMatchObject({
        status: 401,
        body: INVALID,
      });
      expect(await bindingOf(dana.id)).toEqual({ sso_issuer: null, sso_subject: null });

      const reactivated = await api.put(`/api/users/${dana.id}`, {
        token: tokenFor(admin),
        body: { active: true },
      });
      expect(reactivated.status).toBe(200);
      // Dana herself comes back and binds her account; the newcomer's refused token gave them no claim to it.
      const returning = await idp.accessToken({ preferred_username: 'dana', sub: 'subject-of-dana' });
      expect((await api.get('/api/auth/me', { token: returning })).body.data.id).toBe(dana.id);
      expect(await bindingOf(dana.id)).toEqual({ sso_issuer: idp.issuer, sso_subject: 'subject-of-dana' });
    });

    it('binds a user created on first sight to the token that created it', async () => {
      const token = await idp.accessToken({
        preferred_username: 'fresh.face',
        sub: 'subject-of-fresh',
        email: 'fresh.face@example.edu',
      });
      const me = await api.get('/api/auth/me', { token });
      expect(me.status).toBe(200);
      expect(await bindingOf(me.body.data.id)).toEqual({
        sso_issuer: idp.issuer,
        sso_subject: 'subject-of-fresh',
      });
      const other = await idp.accessToken({
        preferred_username: 'FRESH.face',
        sub: 'subject-of-another',
        email: 'fresh.face@example.edu',
      });
      expect(await api.get('/api/auth/me', { token: other })).toMatchObject({
        status: 403,
        body: NO_ACCOUNT,
      });
    });

    it('DELETE /api/users/{user_id}/sso-binding clears it (admin, audited); the next token binds again', async () => {
      const admin = await makeUser(app.dataSource, { admin: true });
      const carl = await makeUser(app.dataSource, { username: 'carl' });
      const old = await idp.accessToken({ preferred_username: 'carl', sub: 'subject-of-old-carl' });
      expect((await api.get('/api/auth/me', { token: old })).status).toBe(200);
      const successor = () => idp.accessToken({ preferred_username: 'carl', sub: 'subject-of-new-carl' });
      expect((await api.get('/api/auth/me', { token: await successor() })).status).toBe(403);

      expect(await api.delete(`/api/users/${carl.id}/sso-binding`, { token: tokenFor(carl) })).toMatchObject({
        status: 403,
      });
      const res = await api.delete(`/api/users/${carl.id}/sso-binding`, { token: tokenFor(admin) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        message: 'Single sign-on binding removed',
        data: { id: carl.id, username: 'carl', email: carl.email, admin: false },
      });
      expect(await bindingOf(carl.id)).toEqual({ sso_issuer: null, sso_subject: null });
      expect(
        await app.dataSource.query(
          `SELECT actor_id, action, target_type, target_ids, summary FROM audit_events WHERE action <> 'user.create'`,
        ),
      ).toEqual([
        {
          actor_id: admin.id,
          action: 'user.update',
          target_type: 'user',
          target_ids: [String(carl.id)],
          summary: { sso_binding: 'removed' },
        },
      ]);

      expect((await api.get('/api/auth/me', { token: await successor() })).body.data.id).toBe(carl.id);
      expect(await bindingOf(carl.id)).toEqual({
        sso_issuer: idp.issuer,
        sso_subject: 'subject-of-new-carl',
      });
      const again = await idp.accessToken({ preferred_username: 'carl', sub: 'subject-of-old-carl' });
      expect((await api.get('/api/auth/me', { token: again })).status).toBe(403);

      expect(await api.delete(`/api/users/999999999/sso-binding`, { token: tokenFor(admin) })).toMatchObject({
        status: 404,
        body: { success: false, data: null, message: 'User not found' },
      });
    });
  });

  describe('administrators are reached only through their binding', () => {
    const bindingOf = async (id: number) =>
      (await app.dataSource.query(`SELECT sso_issuer, sso_subject FROM users WHERE id = $1`, [id]))[0] as {
        sso_issuer: string | null;
        sso_subject: string | null;
      };

    it('never binds an admin at first sight: whoever names an unbound admin gets 403, and nothing is stored', async () => {
      const admin = await makeUser(app.dataSource, { username: 'admin', admin: true });
      for (const name of ['admin', 'ADMIN']) {
        const token = await idp.accessToken({
          preferred_username: name,
          sub: `subject-of-an-attacker-${name}`,
          email: 'attacker@example.edu',
        });
        expect(await api.get('/api/auth/me', { token })).toMatchObject({ status: 403, body: NO_ACCOUNT });
      }
      expect(await bindingOf(admin.id)).toEqual({ sso_issuer: null, sso_subject: null });
      // OIDC_CREATE_USERS is on here: still nobody created.
      expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM users`)).toEqual([{ n: 1 }]);
      expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM audit_events`)).toEqual([{ n: 0 }]);
    });

    it('reaches a bound admin through the binding; another sub naming the admin gets 403', async () => {
      const admin = await makeUser(app.dataSource, { username: 'head', admin: true });
      await bindUser(app, admin.id, idp.issuer, 'subject-of-head');
      const own = await idp.accessToken({ preferred_username: 'head.renamed', sub: 'subject-of-head' });
      expect((await api.get('/api/users', { token: own })).status).toBe(200);
      const other = await idp.accessToken({ preferred_username: 'head', sub: 'subject-of-someone' });
      expect(await api.get('/api/auth/me', { token: other })).toMatchObject({
        status: 403,
        body: NO_ACCOUNT,
      });
    });

    it('keeps the binding of a user promoted to admin after binding', async () => {
      const admin = await makeUser(app.dataSource, { admin: true });
      const erin = await makeUser(app.dataSource, { username: 'erin' });
      const first = await idp.accessToken({ preferred_username: 'erin', sub: 'subject-of-erin' });
      expect((await api.get('/api/auth/me', { token: first })).body.data.admin).toBe(false);
      const promoted = await api.put(`/api/users/${erin.id}`, {
        token: tokenFor(admin),
        body: { admin: true },
      });
      expect(promoted.status).toBe(200);
      const later = await idp.accessToken({ preferred_username: 'erin', sub: 'subject-of-erin' });
      expect((await api.get('/api/users', { token: later })).status).toBe(200);
      expect(await bindingOf(erin.id)).toEqual({ sso_issuer: idp.issuer, sso_subject: 'subject-of-erin' });
    });
  });

  describe('linking an administrator to their identity at the IdP', () => {
    const bindingOf = async (id: number) =>
      (await app.dataSource.query(`SELECT sso_issuer, sso_subject FROM users WHERE id = $1`, [id]))[0] as {
        sso_issuer: string | null;
        sso_subject: string | null;
      };
    const SET = 'Single sign-on binding set';
    const TAKEN = { success: false, data: null, message: 'This identity is bound to another user' };

    it('POST /api/auth/sso-binding: an admin signed in with a password links the identity of an IdP token', async () => {
      const root = await makeUser(app.dataSource, { username: 'root', admin: true });
      const login = await api.post('/api/auth/login', {
        body: { username: 'root', password: DEFAULT_PASSWORD },
      });
      const session = login.body.data.token as string;
      const idpToken = await idp.accessToken({ preferred_username: 'root.at.idp', sub: 'subject-of-root' });
      expect(await api.get('/api/auth/me', { token: idpToken })).toMatchObject({
        status: 403,
        body: NO_ACCOUNT,
      });

      const res = await api.post('/api/auth/sso-binding', { token: session, body: { token: idpToken } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        message: SET,
        data: { id: root.id, username: 'root', admin: true },
      });
      expect(await bindingOf(root.id)).toEqual({ sso_issuer: idp.issuer, sso_subject: 'subject-of-root' });
      expect(
        await app.dataSource.query(
          `SELECT actor_id, action, target_type, target_ids, summary FROM audit_events`,
        ),
      ).toEqual([
        {
          actor_id: root.id,
          action: 'user.update',
          target_type: 'user',
          target_ids: [String(root.id)],
          summary: { sso_binding: { from: null, to: { issuer: idp.issuer, subject: 'subject-of-root' } } },
        },
      ]);
      expect(await app.dataSource.query(`SELECT type, data FROM change_events`)).toEqual([
        { type: 'user.updated', data: res.body.data },
      ]);
      const later = await idp.accessToken({ preferred_username: 'root.at.idp', sub: 'subject-of-root' });
      expect((await api.get('/api/users', { token: later })).status).toBe(200);

      // Signed in with an IdP token: refused, even for the identity already linked.
      expect(await api.post('/api/auth/sso-binding', { token: later, body: { token: later } })).toMatchObject(
        {
          status: 403,
          body: { success: false, data: null, message: 'Sign in with your password to link an identity' },
        },
      );
    });

    it('POST /api/auth/sso-binding: refuses a bad body, a token that fails verification, and an identity bound to another user', async () => {
      const root = await makeUser(app.dataSource, { username: 'root', admin: true });
      const other = await makeUser(app.dataSource, { username: 'other' });
      await bindUser(app, other.id, idp.issuer, 'subject-of-other');
      const session = tokenFor(root);
      expect(await api.post('/api/auth/sso-binding', { token: session, body: {} })).toMatchObject({
        status: 400,
        body: { message: 'token must be a string of 1-16384 characters' },
      });
      const now = Math.floor(Date.now() / 1000);
      for (const bad of [
        'not-a-token',
        await idp.mint({ preferred_username: 'root', exp: now - 120, iat: now - 600 }),
        await idp.mint({ preferred_username: 'root', sub: undefined }),
      ]) {
        expect(
          await api.post('/api/auth/sso-binding', { token: session, body: { token: bad } }),
        ).toMatchObject({
          status: 401,
          body: INVALID,
        });
      }
      const taken = await idp.accessToken({ preferred_username: 'root', sub: 'subject-of-other' });
      expect(
        await api.post('/api/auth/sso-binding', { token: session, body: { token: taken } }),
      ).toMatchObject({
        status: 409,
        body: TAKEN,
      });
      expect(await bindingOf(root.id)).toEqual({ sso_issuer: null, sso_subject: null });
      const plain = await idp.accessToken({ preferred_username: 'other', sub: 'subject-of-other' });
      expect(
        await api.post('/api/auth/sso-binding', { token: tokenFor(other), body: { token: plain } }),
      ).toMatchObject({
        status: 403,
        body: { message: 'You do not have permission to perform this action' },
      });
      expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM audit_events`)).toEqual([{ n: 0 }]);
    });

    it("PUT /api/users/{user_id}/sso-binding: an admin sets another user's binding, replacing the old one", async () => {
      const admin = await makeUser(app.dataSource, { admin: true });
      const dean = await makeUser(app.dataSource, { username: 'dean', admin: true });
      await bindUser(app, dean.id, idp.issuer, 'subject-of-old-dean');
      const old = await idp.accessToken({ preferred_username: 'dean', sub: 'subject-of-old-dean' });
      expect((await api.get('/api/users', { token: old })).status).toBe(200);

      const res = await api.put(`/api/users/${dean.id}/sso-binding`, {
        token: tokenFor(admin),
        body: { issuer: idp.issuer, subject: 'subject-of-dean' },
      });
      expect(res).toMatchObject({
        status: 200,
        body: { success: true, message: SET, data: { id: dean.id, username: 'dean' } },
      });
      expect(await bindingOf(dean.id)).toEqual({ sso_issuer: idp.issuer, sso_subject: 'subject-of-dean' });
      expect(await app.dataSource.query(`SELECT actor_id, summary FROM audit_events`)).toEqual([
        {
          actor_id: admin.id,
          summary: {
            sso_binding: {
              from: { issuer: idp.issuer, subject: 'subject-of-old-dean' },
              to: { issuer: idp.issuer, subject: 'subject-of-dean' },
            },
          },
        },
      ]);
      expect(await app.dataSource.query(`SELECT type FROM change_events`)).toEqual([
        { type: 'user.updated' },
      ]);
      const fresh = await idp.accessToken({ preferred_username: 'dean', sub: 'subject-of-dean' });
      expect((await api.get('/api/users', { token: fresh })).status).toBe(200);
      // The old identity's token, remembered, no longer reaches the admin.
      expect(await api.get('/api/users', { token: old })).toMatchObject({ status: 403, body: NO_ACCOUNT });
    });

    it('PUT /api/users/{user_id}/sso-binding: validates the body, then the user, then the identity', async () => {
      const admin = await makeUser(app.dataSource, { admin: true });
      const dean = await makeUser(app.dataSource, { username: 'dean' });
      await bindUser(app, admin.id, idp.issuer, 'subject-of-admin');
      const put = (id: number, body: unknown) =>
        api.put(`/api/users/${id}/sso-binding`, { token: tokenFor(admin), body });
      const ISSUER = 'issuer must be a string of 1-255 characters without control characters';
      const SUBJECT = 'subject must be a string of 1-255 characters without control characters';
      for (const [body, message] of [
        [{}, `${ISSUER}; ${SUBJECT}`],
        [{ issuer: '', subject: 'x' }, ISSUER],
        [{ issuer: idp.issuer, subject: 'x'.repeat(256) }, SUBJECT],
        [{ issuer: idp.issuer, subject: 'a\u0000b' }, SUBJECT],
        [{ issuer: 42, subject: 'x' }, ISSUER],
        [{ issuer: idp.issuer, subject: 'x', extra: 1 }, 'property extra should not exist'],
      ] as const) {
        expect(await put(dean.id, body)).toMatchObject({
          status: 400,
          body: { success: false, data: null, message },
        });
      }
      expect(await put(999_999_999, { issuer: idp.issuer, subject: 'x' })).toMatchObject({
        status: 404,
        body: { message: 'User not found' },
      });
      expect(await put(dean.id, { issuer: idp.issuer, subject: 'subject-of-admin' })).toMatchObject({
        status: 409,
        body: TAKEN,
      });
      expect(await bindingOf(dean.id)).toEqual({ sso_issuer: null, sso_subject: null });
      expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM audit_events`)).toEqual([{ n: 0 }]);
      // The longest accepted values.
      const long = { issuer: 'i'.repeat(255), subject: 's'.repeat(255) };
      expect((await put(dean.id, long)).status).toBe(200);
      expect(await bindingOf(dean.id)).toEqual({ sso_issuer: long.issuer, sso_subject: long.subject });
    });
  });

  describe('usernames that break the username rule', () => {
    it('never match anyone: no Unicode case folding joins two names (U+0130, the Kelvin sign)', async () => {
      const admin = await makeUser(app.dataSource, { username: 'admin', admin: true });
      const kelvin = await makeUser(app.dataSource, { username: 'kelvin' });
      for (const name of ['adm\u0130n', '\u212Aelvin', 'ADM\u0130N']) {
        const token = await idp.accessToken({
          preferred_username: name,
          sub: `subject-${name}`,
          email: 'someone@example.edu',
        });
        expect(await api.get('/api/auth/me', { token })).toMatchObject({ status: 403, body: NO_ACCOUNT });
      }
      const users = await app.dataSource.query(`SELECT id, sso_subject FROM users ORDER BY id`);
      expect(users).toEqual([
        { id: admin.id, sso_subject: null },
        { id: kelvin.id, sso_subject: null },
      ]);
    });
  });

  describe('email_verified', () => {
    it('refuses a first-sight creation from a token whose email is not verified, storing nothing', async () => {
      const unverified = await idp.accessToken({
        preferred_username: 'unverified',
        email: 'unverified@example.edu',
        email_verified: false,
      });
      expect(await api.get('/api/auth/me', { token: unverified })).toMatchObject({
        status: 403,
        body: NO_ACCOUNT,
      });
      expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM users`)).toEqual([{ n: 0 }]);
      expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM audit_events`)).toEqual([{ n: 0 }]);
      const verified = await idp.accessToken({
        preferred_username: 'verified',
        email: 'verified@example.edu',
        email_verified: true,
      });
      expect((await api.get('/api/auth/me', { token: verified })).status).toBe(200);
    });

    it('takes the email rule of the user routes: an address on a one-label domain (admin@localhost)', async () => {
      const token = await idp.accessToken({ preferred_username: 'ops', email: 'Ops@localhost' });
      const me = await api.get('/api/auth/me', { token });
      expect(me.status).toBe(200);
      expect(me.body.data).toMatchObject({ username: 'ops', email: 'ops@localhost' });
    });
  });

  describe('tokens that are refused with 401', () => {
    beforeEach(async () => {
      const victim = await makeUser(app.dataSource, { username: 'victim', admin: true });
      await bindUser(app, victim.id, idp.issuer, 'person-victim');
    });
    const person = { preferred_username: 'victim', email: 'victim@example.edu' };

    async function expectRefused(token: string) {
      expect(await api.get('/api/auth/me', { token })).toMatchObject({ status: 401, body: INVALID });
    }

    it('accepts the minted control token (so the refusals below are about one change each)', async () => {
      expect((await api.get('/api/auth/me', { token: await idp.mint(person) })).status).toBe(200);
    });

    it('wrong audience, or none', async () => {
      await expectRefused(await idp.mint({ ...person, aud: 'https://other.example.edu/api' }));
      await expectRefused(await idp.mint({ ...person, aud: undefined }));
    });

    it('expired beyond the 60 s tolerance, or not yet valid', async () => {
      const now = Math.floor(Date.now() / 1000);
      await expectRefused(await idp.mint({ ...person, iat: now - 3600, exp: now - 61 }));
      await expectRefused(await idp.mint({ ...person, nbf: now + 120 }));
      await expectRefused(await idp.mint({ ...person, exp: undefined }));
      // Within the tolerance: accepted.
      expect(
        (await api.get('/api/auth/me', { token: await idp.mint({ ...person, exp: now - 30 }) })).status,
      ).toBe(200);
    });

    it('an ID token or another type of token for the right audience; an unmarked access token passes', async () => {
      const jwt = { header: { typ: 'JWT' } };
      await expectRefused(await idp.mint(person, { header: { typ: 'logout+jwt' } }));
      await expectRefused(await idp.mint({ ...person, typ: 'ID' }, jwt));
      await expectRefused(await idp.mint({ ...person, nonce: 'n-0S6_WzA2Mj' }, jwt));
      await expectRefused(await idp.mint({ ...person, at_hash: 'MTIzNDU2Nzg5MDEyMzQ1Ng' }, jwt));
      await expectRefused(await idp.mint({ ...person, token_use: 'id' }, { header: { typ: undefined } }));
      // Access tokens as Keycloak, Entra ID and Okta mark them (or do not), and RFC 9068's media type.
      for (const [claims, header] of [
        [{ typ: 'Bearer' }, { typ: 'JWT' }],
        [{}, { typ: 'JWT' }],
        [{ token_use: 'access' }, { typ: undefined }],
        [{}, { typ: 'application/at+jwt' }],
      ] as const) {
        const token = await idp.mint({ ...person, ...claims }, { header });
        expect((await api.get('/api/auth/me', { token })).status).toBe(200);
      }
    });

    it('living longer than OIDC_MAX_TOKEN_AGE (exp - iat over 86400 s by default), or without an iat', async () => {
      const now = Math.floor(Date.now() / 1000);
      await expectRefused(await idp.mint({ ...person, iat: now, exp: now + 86_401 }));
      await expectRefused(await idp.mint({ ...person, iat: now - 86_000, exp: now + 402 }));
      // Without iat its lifetime is unknown: refused.
      await expectRefused(await idp.mint({ ...person, iat: undefined }));
      expect(
        (await api.get('/api/auth/me', { token: await idp.mint({ ...person, iat: now, exp: now + 86_400 }) }))
          .status,
      ).toBe(200);
    });

    it('issued in the future beyond the 60 s tolerance', async () => {
      const now = Math.floor(Date.now() / 1000);
      await expectRefused(await idp.mint({ ...person, iat: now + 120 }));
      expect(
        (await api.get('/api/auth/me', { token: await idp.mint({ ...person, iat: now + 30 }) })).status,
      ).toBe(200);
    });

    it('alg none, and HS256 "signed" with the public key (algorithm confusion)', async () => {
      await expectRefused(unsignedToken({ ...person, iss: idp.issuer, aud: TEST_AUDIENCE, exp: 4102444800 }));
      const now = Math.floor(Date.now() / 1000);
      const publicKeyBytes = new TextEncoder().encode(JSON.stringify(idp.key.publicJwk));
      const confused = await new SignJWT({
        ...person,
        iss: idp.issuer,
        aud: TEST_AUDIENCE,
        iat: now,
        exp: now + 600,
      })
        .setProtectedHeader({ alg: 'HS256', kid: idp.key.kid })
        .sign(publicKeyBytes);
      await expectRefused(confused);
    });

    it('an unknown kid, without refetching the keys again within the cooldown', async () => {
      // A first token makes sure the keys were fetched; then a kid the IdP never published.
      await api.get('/api/auth/me', { token: await idp.mint(person) });
      const before = idp.jwksRequests;
      const stranger = await makeSigningKey('not-published');
      await expectRefused(await idp.mint(person, { key: stranger }));
      await expectRefused(await idp.mint(person, { key: stranger, header: { kid: idp.key.kid } }));
      // No kid at all, though the IdP's only key would verify it.
      await expectRefused(await idp.mint(person, { header: { kid: undefined } }));
      expect(idp.jwksRequests).toBe(before);
    });

    it('a tampered payload', async () => {
      const token = await idp.mint({ preferred_username: 'nobody-special', email: 'n@example.edu' });
      const [header, , signature] = token.split('.');
      const payload = base64url.encode(JSON.stringify({ ...decodeJwt(token), preferred_username: 'victim' }));
      await expectRefused(`${header}.${payload}.${signature}`);
    });

    it('the issuer spelt differently, and a token of a second real IdP for the same audience', async () => {
      await expectRefused(await idp.mint({ ...person, iss: `${idp.issuer}/` }));
      const second = await TestIdp.start();
      try {
        await expectRefused(await second.accessToken(person));
        // Even claiming this IdP's issuer, its signature does not verify with this IdP's keys.
        await expectRefused(await second.mint({ ...person, iss: idp.issuer }));
      } finally {
        await second.stop();
      }
    });

    it('an HS256 token with the service secret but the IdP as issuer goes the IdP way and fails', async () => {
      const secret = new TextEncoder().encode(app.config.jwtSecret);
      const now = Math.floor(Date.now() / 1000);
      const forged = await new SignJWT({
        ...person,
        iss: idp.issuer,
        aud: TEST_AUDIENCE,
        sub: '1',
        admin: true,
        iat: now,
        exp: now + 60,
      })
        .setProtectedHeader({ alg: 'HS256' })
        .sign(secret);
      await expectRefused(forged);
    });
  });

  describe('the Swagger UI console with OIDC_CLIENT_ID', () => {
    it('documents the IdP as an openIdConnect scheme beside bearer on every protected operation', async () => {
      const document = (await api.get('/api/docs-json')).body;
      expect(document.components.securitySchemes.sso).toEqual({
        type: 'openIdConnect',
        openIdConnectUrl: `${idp.issuer}/.well-known/openid-configuration`,
        description: expect.stringContaining(`Sign in with ${new URL(idp.issuer).host}`),
      });
      expect(document.paths['/api/auth/me'].get.security).toEqual([{ bearer: [] }, { sso: [] }]);
      expect(document.paths['/api/auth/config'].get.security).toEqual([]);
      const init = await api.get('/api/docs/swagger-ui-init.js');
      expect(init.body).toContain(`"clientId":"${CONSOLE_CLIENT_ID}"`);
      expect(init.body).toContain('"usePkceWithAuthorizationCodeGrant":true');
    });

    it("relaxes COOP and connect-src for the IdP's origin on the docs pages only", async () => {
      const page = await api.get('/api/docs');
      expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin-allow-popups');
      expect(page.headers.get('content-security-policy')).toContain(`connect-src 'self' ${idp.issuer}`);
      const redirect = await api.get('/api/docs/oauth2-redirect.html');
      expect(redirect.status).toBe(200);
      expect(redirect.body).toContain('oauth2-redirect.js');
      expect(redirect.headers.get('cross-origin-opener-policy')).toBeNull();
      expect(redirect.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect((await api.get('/api/docs/oauth2-redirect.js')).status).toBe(200);
      for (const path of ['/api/health', '/api/docs-json', '/api/auth/config']) {
        const res = await api.get(path);
        expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
        expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      }
    });
  });

  describe('GET /api/auth/config', () => {
    it('names the IdP and its endpoints from discovery, without a token', async () => {
      const res = await api.get('/api/auth/config');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'Sign-in options retrieved successfully',
        data: {
          password_login: true,
          sso: {
            issuer: idp.issuer,
            client_id: CONSOLE_CLIENT_ID,
            scopes: ['openid', 'profile', 'email'],
            authorization_endpoint: `${idp.issuer}/auth`,
            token_endpoint: `${idp.issuer}/token`,
          },
        },
      });
    });
  });
});

describe('single sign-on: the IdP down at start, then up, then rotating its key', () => {
  let idp: TestIdp;
  let app: TestApp;
  let api: Client;

  beforeAll(async () => {
    idp = new TestIdp(await freePort());
    idp.key = await makeSigningKey('key-1');
    app = await startTestApp(oidcSettings(idp.issuer, { refetchCooldownMs: 300 }));
    api = client(app.url);
  });
  afterAll(async () => {
    await app?.close();
    await idp?.stop();
  });

  it('starts and serves password login and readiness while the IdP cannot be reached; then accepts its tokens', async () => {
    const user = await makeUser(app.dataSource, { username: 'early.bird' });
    expect((await api.get('/api/health/ready')).status).toBe(200);
    const login = await api.post('/api/auth/login', {
      body: { username: 'early.bird', password: DEFAULT_PASSWORD },
    });
    expect(login.status).toBe(200);
    const config = await api.get('/api/auth/config');
    expect(config.body.data.sso).toMatchObject({
      issuer: idp.issuer,
      authorization_endpoint: null,
      token_endpoint: null,
    });

    const token = await idp.mint({ preferred_username: 'early.bird' });
    expect(await api.get('/api/auth/me', { token })).toMatchObject({ status: 401, body: INVALID });

    await idp.listen();
    const provided = await idp.accessToken({ preferred_username: 'early.bird' });
    await eventually(async () => (await api.get('/api/auth/me', { token: provided })).status === 200, 5000);
    expect((await api.get('/api/auth/me', { token })).body.data.id).toBe(user.id);
    expect((await api.get('/api/auth/config')).body.data.sso.token_endpoint).toBe(`${idp.issuer}/token`);
  });

  it('answers 403 for a person without a local user when users are not created', async () => {
    const token = await idp.accessToken({ preferred_username: 'stranger', email: 'stranger@example.edu' });
    expect(await api.get('/api/auth/me', { token })).toMatchObject({ status: 403, body: NO_ACCOUNT });
    expect(await app.dataSource.query(`SELECT id FROM users WHERE username = 'stranger'`)).toEqual([]);
  });

  it('follows a key rotation at the IdP without a restart', async () => {
    const before = await idp.accessToken({ preferred_username: 'early.bird' });
    expect((await api.get('/api/auth/me', { token: before })).status).toBe(200);
    await idp.rotateKey('key-2');
    const after = await idp.accessToken({ preferred_username: 'early.bird' });
    expect(decodeJwt(after)).toBeTruthy();
    // One refetch once the cooldown since the last fetch has passed.
    await eventually(async () => (await api.get('/api/auth/me', { token: after })).status === 200, 5000);
    // A token signed with the retired key, never seen before, is refused.
    const retired = await makeSigningKey('key-1');
    expect(
      (
        await api.get('/api/auth/me', {
          token: await idp.mint({ preferred_username: 'early.bird' }, { key: retired }),
        })
      ).status,
    ).toBe(401);
  });
});

describe("single sign-on while the IdP's key endpoint fails", () => {
  let idp: TestIdp;
  let app: TestApp;
  let api: Client;

  beforeAll(async () => {
    idp = await TestIdp.start();
    app = await startTestApp(oidcSettings(idp.issuer, { refetchCooldownMs: 1000, keysMaxAgeMs: 1500 }));
    api = client(app.url);
    await makeUser(app.dataSource, { username: 'steady' });
    // The keys are fetched once the IdP is discovered.
    await eventually(
      async () =>
        (await api.get('/api/auth/me', { token: await idp.mint({ preferred_username: 'steady' }) }))
          .status === 200,
      5000,
    );
  });
  afterAll(async () => {
    await app?.close();
    await idp?.stop();
  });
  afterEach(() => {
    idp.jwksFailure = 'none';
  });

  it('refetches at most once per cooldown for unknown kids, counted from the last attempt, not the last success', async () => {
    idp.jwksFailure = 'error';
    const stranger = await makeSigningKey('not-published-yet');
    const unknownKid = () => idp.mint({ preferred_username: 'steady' }, { key: stranger });
    const before = idp.jwksRequests;
    // Once the cooldown since the last fetch has passed, an unknown kid makes one (failing) refetch.
    await eventually(async () => {
      expect((await api.get('/api/auth/me', { token: await unknownKid() })).status).toBe(401);
      return idp.jwksRequests > before;
    }, 5000);
    const after = idp.jwksRequests;
    for (let i = 0; i < 5; i++) {
      expect((await api.get('/api/auth/me', { token: await unknownKid() })).status).toBe(401);
    }
    expect(idp.jwksRequests).toBe(after);
    // The last good keys stay in use.
    expect(
      (await api.get('/api/auth/me', { token: await idp.mint({ preferred_username: 'steady' }) })).status,
    ).toBe(200);
  });

  it('refreshes stale keys in the background, one fetch at a time: no request waits on a hanging endpoint', async () => {
    idp.jwksFailure = 'hang';
    const before = idp.jwksRequests;
    const known = async () => {
      const started = Date.now();
      const res = await api.get('/api/auth/me', { token: await idp.mint({ preferred_username: 'steady' }) });
      return { status: res.status, ms: Date.now() - started };
    };
    // Requests go on while the keys grow stale; one of them starts the refresh, which then hangs.
    await eventually(async () => {
      const answer = await known();
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(1000);
      return idp.jwksRequests > before;
    }, 10_000);
    for (let i = 0; i < 5; i++) {
      const answer = await known();
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(1000);
    }
    expect(idp.jwksRequests).toBe(before + 1);
  });
});

describe('OIDC_EXTERNAL_ID_CLAIM: the provisioned external_id names the user first', () => {
  let idp: TestIdp;
  let app: TestApp;
  let api: Client;
  beforeAll(async () => {
    idp = await TestIdp.start();
    app = await startTestApp(oidcSettings(idp.issuer, { externalIdClaim: 'oid', createUsers: true }));
    api = client(app.url);
  });
  afterAll(async () => {
    await app?.close();
    await idp?.stop();
  });
  beforeEach(() => app.reset());

  const bindingOf = async (id: number) =>
    (await app.dataSource.query(`SELECT sso_subject FROM users WHERE id = $1`, [id]))[0] as {
      sso_subject: string | null;
    };

  it('reaches the user whose external_id equals the claim, before the binding and the username, binding nothing', async () => {
    const jane = await makeUser(app.dataSource, { username: 'jane.doe@uni.edu' });
    const other = await makeUser(app.dataSource, { username: 'someone.else' });
    await app.dataSource.query(`UPDATE users SET external_id = $2 WHERE id = $1`, [jane.id, 'oid-of-jane']);
    // Bound to another person's sub and named by another username: the external id still wins.
    await app.dataSource.query(
      `UPDATE users SET sso_issuer = $2, sso_subject = 'sub-of-other' WHERE id = $1`,
      [other.id, idp.issuer],
    );
    const token = await idp.accessToken({
      preferred_username: 'someone.else',
      sub: 'sub-of-other',
      oid: 'oid-of-jane',
    });
    expect((await api.get('/api/auth/me', { token })).body.data).toMatchObject({
      id: jane.id,
      external_id: 'oid-of-jane',
    });
    expect(await bindingOf(jane.id)).toEqual({ sso_subject: null });
  });

  it('falls back to the binding and the username when no user holds the claim; the claim is compared exactly', async () => {
    const jane = await makeUser(app.dataSource, { username: 'jane' });
    await app.dataSource.query(`UPDATE users SET external_id = $2 WHERE id = $1`, [jane.id, 'OID-OF-JANE']);
    const token = await idp.accessToken({
      preferred_username: 'jane',
      sub: 'sub-of-jane',
      oid: 'oid-of-jane',
    });
    expect((await api.get('/api/auth/me', { token })).body.data.id).toBe(jane.id);
    expect(await bindingOf(jane.id)).toEqual({ sso_subject: 'sub-of-jane' });
  });

  it("never reaches an admin through the claim unless the admin is bound to the token's (iss, sub)", async () => {
    const admin = await makeUser(app.dataSource, { username: 'chief', admin: true });
    await app.dataSource.query(`UPDATE users SET external_id = 'oid-of-chief' WHERE id = $1`, [admin.id]);
    const stranger = await idp.accessToken({
      preferred_username: 'mallory',
      sub: 'sub-of-mallory',
      email: 'mallory@example.edu',
      oid: 'oid-of-chief',
    });
    expect(await api.get('/api/auth/me', { token: stranger })).toMatchObject({
      status: 403,
      body: NO_ACCOUNT,
    });
    expect(await bindingOf(admin.id)).toEqual({ sso_subject: null });
    expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM users`)).toEqual([{ n: 1 }]);

    await bindUser(app, admin.id, idp.issuer, 'sub-of-chief');
    const own = await idp.accessToken({
      preferred_username: 'chief',
      sub: 'sub-of-chief',
      oid: 'oid-of-chief',
    });
    expect((await api.get('/api/users', { token: own })).status).toBe(200);
    const again = await idp.accessToken({
      preferred_username: 'chief',
      sub: 'sub-of-mallory',
      oid: 'oid-of-chief',
    });
    expect(await api.get('/api/auth/me', { token: again })).toMatchObject({ status: 403, body: NO_ACCOUNT });
  });

  it('stops reaching a user matched by the claim once the user is made an admin (within the user cache bound)', async () => {
    const admin = await makeUser(app.dataSource, { admin: true });
    const fred = await makeUser(app.dataSource, { username: 'fred' });
    await app.dataSource.query(`UPDATE users SET external_id = 'oid-of-fred' WHERE id = $1`, [fred.id]);
    const token = await idp.accessToken({
      preferred_username: 'fred',
      sub: 'sub-of-fred',
      oid: 'oid-of-fred',
    });
    expect((await api.get('/api/auth/me', { token })).body.data.id).toBe(fred.id);
    const promoted = await api.put(`/api/users/${fred.id}`, {
      token: tokenFor(admin),
      body: { admin: true },
    });
    expect(promoted.status).toBe(200);
    // The token was remembered with the user it named; the admin it now names was never bound to it.
    await eventually(async () => (await api.get('/api/auth/me', { token })).status === 403, 6000);
    expect(await api.get('/api/users', { token })).toMatchObject({ status: 403, body: NO_ACCOUNT });
  });

  it('refuses an inactive provisioned user found by the claim, and never creates another', async () => {
    const jane = await makeUser(app.dataSource, { username: 'jane' });
    await app.dataSource.query(`UPDATE users SET external_id = 'oid-1', active = false WHERE id = $1`, [
      jane.id,
    ]);
    const token = await idp.accessToken({
      preferred_username: 'jane.new',
      sub: 'sub-new',
      email: 'jane.new@example.edu',
      oid: 'oid-1',
    });
    expect(await api.get('/api/auth/me', { token })).toMatchObject({ status: 401, body: INVALID });
    expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM users`)).toEqual([{ n: 1 }]);
  });
});

describe('ADMIN_OIDC_SUBJECT: the bootstrap admin bound at start', () => {
  let idp: TestIdp;
  let app: TestApp;
  let api: Client;
  beforeAll(async () => {
    idp = await TestIdp.start();
    app = await startTestApp({
      ...oidcSettings(idp.issuer, { adminSubject: 'subject-of-the-first-admin' }),
      passwordLogin: false,
    });
    api = client(app.url);
  });
  afterAll(async () => {
    await app?.close();
    await idp?.stop();
  });
  beforeEach(() => app.reset());
  // The describe below expects an empty audit trail.
  afterEach(() => app.reset());

  const bootstrap = () => app.service.app.get(AdminBootstrap).onApplicationBootstrap();

  it('creates the first admin bound to (OIDC_ISSUER, ADMIN_OIDC_SUBJECT), reachable with password login off', async () => {
    await bootstrap();
    const token = await idp.accessToken({
      preferred_username: 'the.head',
      sub: 'subject-of-the-first-admin',
    });
    const me = await api.get('/api/auth/me', { token });
    expect(me.body.data).toMatchObject({ username: 'admin', admin: true });
    expect((await api.get('/api/users', { token })).status).toBe(200);
    expect(await app.dataSource.query(`SELECT action, actor_id, summary FROM audit_events`)).toEqual([
      {
        action: 'user.update',
        actor_id: null,
        summary: {
          sso_binding: { from: null, to: { issuer: idp.issuer, subject: 'subject-of-the-first-admin' } },
        },
      },
    ]);
  });

  it('binds an existing unbound bootstrap admin, and leaves a bound one as it is', async () => {
    const admin = await makeUser(app.dataSource, { username: 'admin', admin: true });
    await bootstrap();
    expect(
      await app.dataSource.query(`SELECT sso_issuer, sso_subject FROM users WHERE id = $1`, [admin.id]),
    ).toEqual([{ sso_issuer: idp.issuer, sso_subject: 'subject-of-the-first-admin' }]);
    await bindUser(app, admin.id, idp.issuer, 'subject-linked-later');
    await bootstrap();
    expect(await app.dataSource.query(`SELECT sso_subject FROM users WHERE id = $1`, [admin.id])).toEqual([
      { sso_subject: 'subject-linked-later' },
    ]);
  });
});

describe('PASSWORD_LOGIN=false', () => {
  let app: TestApp;
  let api: Client;
  beforeAll(async () => {
    app = await startTestApp({ passwordLogin: false });
    api = client(app.url);
  });
  afterAll(() => app?.close());

  it('answers every login with 403 before checking or counting anything; earlier tokens stay valid', async () => {
    const user = await makeUser(app.dataSource);
    for (let i = 0; i < 12; i++) {
      const res = await api.post('/api/auth/login', {
        body: { username: user.username, password: i === 11 ? DEFAULT_PASSWORD : `wrong-${i}` },
      });
      expect(res).toMatchObject({
        status: 403,
        body: { success: false, data: null, message: 'Password login is disabled; use single sign-on' },
      });
    }
    // The password change is not a second login: refused too, before anything is checked or counted.
    for (const current_password of ['wrong-password', DEFAULT_PASSWORD]) {
      const change = await api.put('/api/auth/password', {
        token: tokenFor(user),
        body: { current_password, new_password: 'a-brand-new-password' },
      });
      expect(change).toMatchObject({
        status: 403,
        body: { success: false, data: null, message: 'Password login is disabled; use single sign-on' },
      });
    }
    expect(
      (await api.put('/api/auth/password', { token: tokenFor(user), body: { nonsense: true } })).status,
    ).toBe(403);
    const invalidBody = await api.post('/api/auth/login', { body: { nonsense: true } });
    expect(invalidBody.status).toBe(403);
    expect(await app.dataSource.query(`SELECT action FROM audit_events`)).toEqual([]);
    expect((await api.get('/api/auth/me', { token: tokenFor(user) })).status).toBe(200);
    expect((await api.get('/api/auth/config')).body).toEqual({
      success: true,
      message: 'Sign-in options retrieved successfully',
      data: { password_login: false, sso: null },
    });
  });
});
