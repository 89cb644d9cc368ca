// Part of test/sso.e2e-spec.ts: PASSWORD_LOGIN=false.
import { startTestApp, type TestApp } from '../../support/app.js';
import { DEFAULT_PASSWORD, makeUser, tokenFor } from '../../support/factories.js';
import { client, type Client } from '../../support/http.js';

export function passwordLoginOff(): void {
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
}
