// Part of test/auth.e2e-spec.ts: the login throttle behind a proxy, and the first administrator.
import { startTestApp, useTestApp } from '../../support/app.js';
import { DEFAULT_PASSWORD, makeUser } from '../../support/factories.js';
import { client } from '../../support/http.js';
import { type AuthContext } from './context.js';

export function proxyAndFirstAdminTests(ctx: AuthContext): void {
  const { app } = ctx;

  describe('the login throttle behind a proxy (one window per username and per address)', () => {
    const behindProxy = useTestApp({ trustProxy: ['127.0.0.1'] });
    beforeEach(() => behindProxy.app.reset());
    const attempt = (username: string, password: string, from: string) =>
      behindProxy.api.post('/api/auth/login', {
        body: { username, password },
        headers: { 'x-forwarded-for': from },
      });

    it('keeps a username outside the rule in a window of its own: no Unicode folding joins or splits one', async () => {
      const ds = behindProxy.app.dataSource;
      await makeUser(ds, { username: 'admin', admin: true });
      await makeUser(ds, { username: 'kelvin' });
      // Ten failures as "Kelvin" with the Kelvin sign, each from its own address: kelvin's window is untouched.
      for (let i = 0; i < 10; i++)
        expect((await attempt('\u212Aelvin', 'wrong', `192.0.2.${i}`)).status).toBe(401);
      expect((await attempt('\u212Aelvin', 'wrong', '192.0.2.50')).status).toBe(429);
      expect((await attempt('kelvin', DEFAULT_PASSWORD, '192.0.2.51')).status).toBe(200);
      // Ten failures as admin: "admİn" (which signs in as nobody) is not throttled by them, admin is.
      for (let i = 0; i < 10; i++)
        expect((await attempt('admin', 'wrong', `198.51.100.${i}`)).status).toBe(401);
      expect((await attempt('adm\u0130n', DEFAULT_PASSWORD, '198.51.100.50')).status).toBe(401);
      expect((await attempt('ADMIN', DEFAULT_PASSWORD, '198.51.100.51')).status).toBe(429);
    });
  });

  describe('first administrator', () => {
    it('is created from ADMIN_* settings when the users table is empty, once even for concurrent starts', async () => {
      await app.dataSource.query('TRUNCATE users CASCADE');
      const starts = await Promise.all(
        [1, 2, 3].map(() =>
          startTestApp({
            adminUsername: 'root',
            adminEmail: 'root@uni.example',
            adminPassword: 'root-password-123',
          }),
        ),
      );
      try {
        const rows = await app.dataSource.query(`SELECT username, email, admin FROM users`);
        expect(rows).toEqual([{ username: 'root', email: 'root@uni.example', admin: true }]);
        const res = await client(starts[0].url).post('/api/auth/login', {
          body: { username: 'ROOT', password: 'root-password-123' },
        });
        expect(res.status).toBe(200);
        expect(res.body.data.user.admin).toBe(true);
      } finally {
        await Promise.all(starts.map((started) => started.close()));
      }
    });
  });
}
