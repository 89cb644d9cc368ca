// Part of test/sso.e2e-spec.ts: the IdP down at start, then up, then rotating its key.
import { decodeJwt } from 'jose';
import { startTestApp, type TestApp } from '../../support/app.js';
import { DEFAULT_PASSWORD, makeUser } from '../../support/factories.js';
import { client, type Client } from '../../support/http.js';
import { freePort, makeSigningKey, TestIdp } from '../../support/idp.js';
import { oidcSettings } from '../../support/oidc-settings.js';
import { eventually } from '../../support/users-helpers.js';
import { expectNoAccount, INVALID } from './context.js';

export function idpDownAtStart(): void {
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
    await expectNoAccount(api, token);
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
}
