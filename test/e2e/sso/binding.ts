// Part of test/sso.e2e-spec.ts: binding a user to the IdP's (iss, sub), and administrators reached only through it.
import { makeUser, tokenFor } from '../../support/factories.js';
import { bindingOf, bindUser, expectNoAccount, INVALID, type SsoContext } from './context.js';

export function bindingTests(ctx: SsoContext): void {
  const { app, api, idp } = ctx;

  describe("binding a user to the IdP's (iss, sub)", () => {
    it('binds on first sign-in; a renamed account still reaches its user; another sub naming it gets 403', async () => {
      const anna = await makeUser(app.dataSource, { username: 'anna' });
      const first = await idp.accessToken({ preferred_username: 'Anna', sub: 'subject-of-anna' });
      expect((await api.get('/api/auth/me', { token: first })).body.data.id).toBe(anna.id);
      expect(await bindingOf(app, anna.id)).toEqual({
        sso_issuer: idp.issuer,
        sso_subject: 'subject-of-anna',
      });

      // Renamed at the IdP: the sub still names her.
      const renamed = await idp.accessToken({ preferred_username: 'anna.married', sub: 'subject-of-anna' });
      expect((await api.get('/api/auth/me', { token: renamed })).body.data.id).toBe(anna.id);

      // The username handed to someone else at the IdP: no takeover, nothing created (OIDC_CREATE_USERS is on).
      const impostor = await idp.accessToken({
        preferred_username: 'anna',
        sub: 'subject-of-someone-else',
        email: 'new.anna@example.edu',
      });
      await expectNoAccount(api, impostor);
      expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM users`)).toEqual([{ n: 1 }]);
      expect(await bindingOf(app, anna.id)).toEqual({
        sso_issuer: idp.issuer,
        sso_subject: 'subject-of-anna',
      });
    });

    it('answers 401 for a token without a sub, and for a bound sub without the username claim', async () => {
      const bob = await makeUser(app.dataSource, { username: 'bob' });
      for (const sub of [undefined, '', 42]) {
        const token = await idp.mint({ preferred_username: 'bob', sub });
        expect(await api.get('/api/auth/me', { token })).toMatchObject({ status: 401, body: INVALID });
      }
      expect(await bindingOf(app, bob.id)).toEqual({ sso_issuer: null, sso_subject: null });
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
      expect(await bindingOf(app, dana.id)).toEqual({ sso_issuer: null, sso_subject: null });

      const reactivated = await api.put(`/api/users/${dana.id}`, {
        token: tokenFor(admin),
        body: { active: true },
      });
      expect(reactivated.status).toBe(200);
      // Dana herself comes back and binds her account; the newcomer's refused token gave them no claim to it.
      const returning = await idp.accessToken({ preferred_username: 'dana', sub: 'subject-of-dana' });
      expect((await api.get('/api/auth/me', { token: returning })).body.data.id).toBe(dana.id);
      expect(await bindingOf(app, dana.id)).toEqual({
        sso_issuer: idp.issuer,
        sso_subject: 'subject-of-dana',
      });
    });

    it('binds a user created on first sight to the token that created it', async () => {
      const token = await idp.accessToken({
        preferred_username: 'fresh.face',
        sub: 'subject-of-fresh',
        email: 'fresh.face@example.edu',
      });
      const me = await api.get('/api/auth/me', { token });
      expect(me.status).toBe(200);
      expect(await bindingOf(app, me.body.data.id)).toEqual({
        sso_issuer: idp.issuer,
        sso_subject: 'subject-of-fresh',
      });
      const other = await idp.accessToken({
        preferred_username: 'FRESH.face',
        sub: 'subject-of-another',
        email: 'fresh.face@example.edu',
      });
      await expectNoAccount(api, other);
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
      expect(await bindingOf(app, carl.id)).toEqual({ sso_issuer: null, sso_subject: null });
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
      expect(await bindingOf(app, carl.id)).toEqual({
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
    it('never binds an admin at first sight: whoever names an unbound admin gets 403, and nothing is stored', async () => {
      const admin = await makeUser(app.dataSource, { username: 'admin', admin: true });
      for (const name of ['admin', 'ADMIN']) {
        const token = await idp.accessToken({
          preferred_username: name,
          sub: `subject-of-an-attacker-${name}`,
          email: 'attacker@example.edu',
        });
        await expectNoAccount(api, token);
      }
      expect(await bindingOf(app, admin.id)).toEqual({ sso_issuer: null, sso_subject: null });
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
      await expectNoAccount(api, other);
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
      expect(await bindingOf(app, erin.id)).toEqual({
        sso_issuer: idp.issuer,
        sso_subject: 'subject-of-erin',
      });
    });
  });
}
