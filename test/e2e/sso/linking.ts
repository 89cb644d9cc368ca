// Part of test/sso.e2e-spec.ts: linking an administrator to their identity at the IdP.
import { DEFAULT_PASSWORD, makeUser, tokenFor } from '../../support/factories.js';
import { bindingOf, bindUser, expectNoAccount, INVALID, NO_ACCOUNT, type SsoContext } from './context.js';

export function linkingTests(ctx: SsoContext): void {
  const { app, api, idp } = ctx;

  describe('linking an administrator to their identity at the IdP', () => {
    const SET = 'Single sign-on binding set';
    const TAKEN = { success: false, data: null, message: 'This identity is bound to another user' };

    it('POST /api/auth/sso-binding: an admin signed in with a password links the identity of an IdP token', async () => {
      const root = await makeUser(app.dataSource, { username: 'root', admin: true });
      const login = await api.post('/api/auth/login', {
        body: { username: 'root', password: DEFAULT_PASSWORD },
      });
      const session = login.body.data.token as string;
      const idpToken = await idp.accessToken({ preferred_username: 'root.at.idp', sub: 'subject-of-root' });
      await expectNoAccount(api, idpToken);

      const res = await api.post('/api/auth/sso-binding', { token: session, body: { token: idpToken } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        message: SET,
        data: { id: root.id, username: 'root', admin: true },
      });
      expect(await bindingOf(app, root.id)).toEqual({
        sso_issuer: idp.issuer,
        sso_subject: 'subject-of-root',
      });
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
      expect(await bindingOf(app, root.id)).toEqual({ sso_issuer: null, sso_subject: null });
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
      expect(await bindingOf(app, dean.id)).toEqual({
        sso_issuer: idp.issuer,
        sso_subject: 'subject-of-dean',
      });
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
      expect(await bindingOf(app, dean.id)).toEqual({ sso_issuer: null, sso_subject: null });
      expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM audit_events`)).toEqual([{ n: 0 }]);
      // The longest accepted values.
      const long = { issuer: 'i'.repeat(255), subject: 's'.repeat(255) };
      expect((await put(dean.id, long)).status).toBe(200);
      expect(await bindingOf(app, dean.id)).toEqual({ sso_issuer: long.issuer, sso_subject: long.subject });
    });
  });
}
