// Part of test/sso.e2e-spec.ts: usernames that break the username rule, email_verified, and the tokens refused with 401.
import { base64url, decodeJwt, SignJWT } from 'jose';
import { makeUser, unsignedToken } from '../../support/factories.js';
import { makeSigningKey, TEST_AUDIENCE, TestIdp } from '../../support/idp.js';
import { bindUser, expectNoAccount, INVALID, type SsoContext } from './context.js';

export function claimAndRefusalTests(ctx: SsoContext): void {
  const { app, api, idp } = ctx;

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
        await expectNoAccount(api, token);
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
      await expectNoAccount(api, unverified);
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
}
