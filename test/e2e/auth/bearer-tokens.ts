// Part of test/auth.e2e-spec.ts: bearer tokens and GET /api/auth/me.
import jwt from 'jsonwebtoken';
import { USER_ACCOUNT_FIELDS } from '../../../src/users/user.shape.js';
import { advanceClock } from '../../support/clock.js';
import {
  DEFAULT_PASSWORD,
  makeUser,
  tokenFor,
  unsignedToken,
  type UserRow,
} from '../../support/factories.js';
import { failure } from '../../support/http.js';
import { nextSecond } from '../../support/users-helpers.js';
import { type AuthContext } from './context.js';

export function bearerTokenTests(ctx: AuthContext): void {
  const { app, api, given } = ctx;

  describe('bearer tokens', () => {
    it('requires an Authorization header of the Bearer scheme (case-insensitive)', async () => {
      expect((await api.get('/api/auth/me')).body).toEqual(failure('Authentication required'));
      for (const header of [`Basic ${tokenFor(given.user)}`, 'Bearer', 'Bearer ', tokenFor(given.user)]) {
        const res = await api.get('/api/auth/me', { headers: { authorization: header } });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(failure('Authentication required'));
      }
      const lower = await api.get('/api/auth/me', {
        headers: { authorization: `bearer ${tokenFor(given.user)}` },
      });
      expect(lower.status).toBe(200);
    });

    it.each([
      ['garbage', () => 'not.a.jwt'],
      [
        'a bad signature',
        (u: UserRow) => tokenFor(u, { secret: 'another-secret-that-is-long-enough-0123456789' }),
      ],
      [
        'an expired token',
        (u: UserRow) => tokenFor(u, { iat: Math.floor(Date.now() / 1000) - 7200, expiresIn: 3600 }),
      ],
      [
        'alg none',
        (u: UserRow) =>
          unsignedToken({
            sub: u.id,
            admin: true,
            iat: Math.floor(Date.now() / 1000),
            exp: Math.floor(Date.now() / 1000) + 60,
          }),
      ],
      ['HS512 with the right key', (u: UserRow) => tokenFor(u, { algorithm: 'HS512' })],
      [
        'a string sub',
        (u: UserRow) =>
          jwt.sign(
            { sub: String(u.id), admin: false },
            'test-secret-that-is-long-enough-for-hs256-0123456789',
          ),
      ],
      [
        'no admin claim',
        (u: UserRow) => jwt.sign({ sub: u.id }, 'test-secret-that-is-long-enough-for-hs256-0123456789'),
      ],
      ['an unknown user', () => tokenFor({ id: 987654321, admin: true })],
    ])('refuses %s with 401 Invalid or expired token', async (_name, make) => {
      const res = await api.get('/api/auth/me', { token: make(given.user) });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(failure('Invalid or expired token'));
    });

    it('refuses the token of a user deleted after it was issued', async () => {
      const token = tokenFor(given.user);
      expect((await api.get('/api/auth/me', { token })).status).toBe(200);
      await app.dataSource.query('DELETE FROM users WHERE id = $1', [given.user.id]);
      // The user check may be cached for up to USER_CACHE_TTL_MS (5 s): let that much pass on the service's clock.
      advanceClock(app, app.config.userCacheTtlMs);
      const res = await api.get('/api/auth/me', { token });
      expect(res.status).toBe(401);
      expect(res.body.message).toBe('Invalid or expired token');
    });

    it('refuses a token once it expires, though it was accepted before (verified tokens are remembered)', async () => {
      const token = tokenFor(given.user, { expiresIn: 2 });
      expect((await api.get('/api/auth/me', { token })).status).toBe(200);
      expect((await api.get('/api/auth/me', { token })).status).toBe(200);
      // Past its expiry on the service's clock (exp is in whole seconds).
      advanceClock(app, 3000);
      const res = await api.get('/api/auth/me', { token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(failure('Invalid or expired token'));
    });

    it('refuses a remembered token once the password changed after it was issued', async () => {
      const token = tokenFor(given.user);
      expect((await api.get('/api/auth/me', { token })).status).toBe(200);
      await nextSecond();
      const changed = await api.put('/api/auth/password', {
        token,
        body: { current_password: DEFAULT_PASSWORD, new_password: 'another-long-password-1' },
      });
      expect(changed.status).toBe(200);
      const res = await api.get('/api/auth/me', { token });
      expect(res.status).toBe(401);
      expect(res.body.message).toBe('Invalid or expired token');
    });

    it('grants admin rights only when both the claim and the stored flag say so', async () => {
      const admin = await makeUser(app.dataSource, { admin: true });
      const asAdmin = await api.get('/api/auth/me', { token: tokenFor({ id: admin.id, admin: false }) });
      expect(asAdmin.body.data.admin).toBe(true); // data is current, whatever the claim
      const forged = tokenFor({ id: given.user.id, admin: true });
      // An admin-only route refuses a non-admin whose token claims admin.
      const res = await api.get('/api/users', { token: forged });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(failure('You do not have permission to perform this action'));
    });
  });

  describe('GET /api/auth/me', () => {
    it('returns the caller as a User summary with current data', async () => {
      const token = tokenFor(given.user);
      await app.dataSource.query(`UPDATE users SET email = 'renamed@example.edu' WHERE id = $1`, [
        given.user.id,
      ]);
      const res = await api.get('/api/auth/me', { token });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('User retrieved successfully');
      expect(res.body.data).toMatchObject({
        id: given.user.id,
        username: 'Jane.Doe',
        email: 'renamed@example.edu',
        avatar_url: null,
      });
      expect(Object.keys(res.body.data)).toEqual(USER_ACCOUNT_FIELDS);
    });
  });
}
