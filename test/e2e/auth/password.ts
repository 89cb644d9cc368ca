// Part of test/auth.e2e-spec.ts: PUT /api/auth/password.
import { DEFAULT_PASSWORD, makeUser, tokenFor } from '../../support/factories.js';
import { nextSecond } from '../../support/users-helpers.js';
import { type AuthContext } from './context.js';

export function passwordTests(ctx: AuthContext): void {
  const { app, api, given, signIn } = ctx;

  describe('PUT /api/auth/password', () => {
    it('changes the password, returns a fresh token and refuses tokens issued before', async () => {
      const login = await signIn('jane.doe', DEFAULT_PASSWORD);
      const oldToken = login.body.data.token;
      await nextSecond();
      const res = await api.put('/api/auth/password', {
        token: oldToken,
        body: { current_password: DEFAULT_PASSWORD, new_password: 'a-brand-new-password' },
      });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Password changed successfully');
      expect(res.body.data.user.id).toBe(given.user.id);
      expect(new Date(res.body.data.user.updated_at).getTime()).toBeGreaterThan(
        given.user.updated_at.getTime(),
      );

      expect((await api.get('/api/auth/me', { token: res.body.data.token })).status).toBe(200);
      const stale = await api.get('/api/auth/me', { token: oldToken });
      expect(stale.status).toBe(401);
      expect(stale.body.message).toBe('Invalid or expired token');

      expect((await signIn('jane.doe', DEFAULT_PASSWORD)).status).toBe(401);
      expect((await signIn('jane.doe', 'a-brand-new-password')).status).toBe(200);
    });

    it('refuses a wrong current password and changes nothing', async () => {
      const token = tokenFor(given.user);
      const res = await api.put('/api/auth/password', {
        token,
        body: { current_password: 'wrong-password', new_password: 'a-brand-new-password' },
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, data: null, message: 'Current password is incorrect' });
      expect((await api.get('/api/auth/me', { token })).status).toBe(200);
      expect((await signIn('jane.doe', DEFAULT_PASSWORD)).status).toBe(200);
    });

    it('counts a wrong current password as a failed login for the username and the address: the 11th is 429', async () => {
      const token = tokenFor(given.user);
      for (let i = 0; i < 10; i++) {
        const res = await api.put('/api/auth/password', {
          token,
          body: { current_password: `wrong-${i}`, new_password: 'a-brand-new-password' },
        });
        expect(res.status).toBe(401);
      }
      const throttled = { success: false, data: null, message: 'Too many requests, try again later' };
      for (const current_password of ['wrong-again', DEFAULT_PASSWORD]) {
        const res = await api.put('/api/auth/password', {
          token,
          body: { current_password, new_password: 'a-brand-new-password' },
        });
        expect(res).toMatchObject({ status: 429, body: throttled });
      }
      // The same window as password login's: the username and the address are both throttled.
      const login = await signIn('jane.doe', DEFAULT_PASSWORD);
      expect(login.status).toBe(429);
      const other = await makeUser(app.dataSource);
      expect((await signIn(other.username, DEFAULT_PASSWORD)).status).toBe(429);
      // Nothing changed.
      expect((await api.get('/api/auth/me', { token })).status).toBe(200);
    });

    it.each([
      [{ current_password: DEFAULT_PASSWORD, new_password: 'short' }, 'Password must be 8-128 characters'],
      [
        { current_password: DEFAULT_PASSWORD, new_password: 'x'.repeat(129) },
        'Password must be 8-128 characters',
      ],
      [{ current_password: DEFAULT_PASSWORD }, 'Password must be 8-128 characters'],
      [{ current_password: DEFAULT_PASSWORD, new_password: 12345678 }, 'Password must be 8-128 characters'],
    ])('rejects %j with 400 %s', async (body, message) => {
      const res = await api.put('/api/auth/password', { token: tokenFor(given.user), body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message });
    });

    it('counts characters as code points (8 emoji are a valid password)', async () => {
      const res = await api.put('/api/auth/password', {
        token: tokenFor(given.user),
        body: { current_password: DEFAULT_PASSWORD, new_password: '😀'.repeat(8) },
      });
      expect(res.status).toBe(200);
    });
  });
}
