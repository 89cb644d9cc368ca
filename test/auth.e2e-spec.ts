// Authentication: sign-in, passwords and tokens (docs/api.md §2), integration tokens.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import { createHash } from 'node:crypto';
import { jest } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { LoginThrottle } from '../src/auth/login-throttle.js';
import { Clock } from '../src/core/clock.js';
import { PasswordHasher } from '../src/users/password-hasher.js';
import { USER_ACCOUNT_FIELDS } from '../src/users/user.shape.js';
import { startTestApp, useTestApp } from './support/app.js';
import { DEFAULT_PASSWORD, makeUser, tokenFor, unsignedToken, type UserRow } from './support/factories.js';
import { client } from './support/http.js';

const nextSecond = () => new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));

describe('authentication (docs/api.md §2)', () => {
  const { app, api } = useTestApp();
  let user: UserRow;
  beforeEach(async () => {
    await app.reset();
    user = await makeUser(app.dataSource, { username: 'Jane.Doe' });
  });
  afterEach(() => jest.restoreAllMocks());

  /** Moves the service's clock (its token and user caches) forward, instead of waiting for them to expire. */
  const advanceClock = (ms: number) => {
    const clock = app.service.app.get(Clock);
    const now = clock.now.bind(clock);
    jest.spyOn(clock, 'now').mockImplementation(() => now() + ms);
  };

  describe('POST /api/auth/login', () => {
    it('signs in case-insensitively and returns an HS256 token with sub, admin, iat and exp', async () => {
      const res = await api.post('/api/auth/login', {
        body: { username: 'jane.DOE', password: DEFAULT_PASSWORD },
      });
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      expect(res.body.message).toBe('Login successful');
      expect(res.body.data.user).toEqual({
        id: user.id,
        username: 'Jane.Doe',
        email: user.email,
        given_name: null,
        family_name: null,
        display_name: null,
        active: true,
        admin: false,
        created_at: user.created_at.toISOString(),
        updated_at: user.updated_at.toISOString(),
        avatar_url: null,
        external_id: null,
      });
      const decoded = jwt.decode(res.body.data.token, { complete: true })!;
      expect(decoded.header.alg).toBe('HS256');
      const claims = decoded.payload as jwt.JwtPayload;
      expect(claims).toEqual({
        sub: user.id,
        admin: false,
        iat: expect.any(Number),
        exp: claims.iat! + 3600,
      });
      expect(res.body.data.expires_at).toBe(new Date(claims.exp! * 1000).toISOString());
      expect(res.body.data.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(JSON.stringify(res.body)).not.toContain('password');
    });

    it('answers a wrong password and an unknown username with the same 401', async () => {
      const wrong = await api.post('/api/auth/login', {
        body: { username: 'jane.doe', password: 'not-the-password' },
      });
      const unknown = await api.post('/api/auth/login', {
        body: { username: 'nobody', password: 'not-the-password' },
      });
      for (const res of [wrong, unknown]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ success: false, data: null, message: 'Invalid username or password' });
      }
    });

    it('answers a username with a NUL character as a failed login, not a server error', async () => {
      const res = await api.post('/api/auth/login', {
        body: { username: 'jane\u0000doe', password: DEFAULT_PASSWORD },
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, data: null, message: 'Invalid username or password' });
    });

    it('validates the body', async () => {
      const res = await api.post('/api/auth/login', { body: { username: 5, extra: true } });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(
        'username must be a string of 1-320 characters; password must be a string of 1-1024 characters; property extra should not exist',
      );
    });

    it('throttles a username after 10 failures in 60 s, refusing even the right password with 429', async () => {
      for (let i = 0; i < 10; i++) {
        const res = await api.post('/api/auth/login', {
          body: { username: 'jane.doe', password: `wrong-${i}` },
        });
        expect(res.status).toBe(401);
      }
      const blocked = await api.post('/api/auth/login', {
        body: { username: 'JANE.DOE', password: DEFAULT_PASSWORD },
      });
      expect(blocked.status).toBe(429);
      expect(blocked.body).toEqual({
        success: false,
        data: null,
        message: 'Too many requests, try again later',
      });
      // Refused before the body is validated.
      expect((await api.post('/api/auth/login', { body: { username: 'jane.doe' } })).status).toBe(429);
    });

    it('throttles a client address after 10 failures across usernames', async () => {
      for (let i = 0; i < 10; i++) {
        expect(
          (await api.post('/api/auth/login', { body: { username: `ghost${i}`, password: 'x' } })).status,
        ).toBe(401);
      }
      const res = await api.post('/api/auth/login', {
        body: { username: 'jane.doe', password: DEFAULT_PASSWORD },
      });
      expect(res.status).toBe(429);
      // Throttling precedes body validation; only the framing of the body (step 0) comes first.
      expect((await api.post('/api/auth/login', { body: {} })).status).toBe(429);
      expect((await api.post('/api/auth/login', { body: '{' })).status).toBe(400);
    });

    it('admits at most 10 of 100 concurrent wrong logins for one username (the rest 429)', async () => {
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          api.post('/api/auth/login', { body: { username: 'jane.doe', password: `wrong-${i}` } }),
        ),
      );
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status === 401)).toHaveLength(10);
      expect(statuses.filter((status) => status === 429)).toHaveLength(90);
      const audit = await app.dataSource.query(
        `SELECT count(*)::int AS n FROM audit_events WHERE action = 'auth.login_failed'`,
      );
      expect(audit[0].n).toBe(10);
    });

    it('admits at most 10 of 60 concurrent wrong logins from one address across usernames', async () => {
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          api.post('/api/auth/login', { body: { username: `ghost${i}`, password: 'x' } }),
        ),
      );
      expect(answers.filter((answer) => answer.status === 401)).toHaveLength(10);
      expect(answers.filter((answer) => answer.status === 429)).toHaveLength(50);
    });

    it('frees the place of a successful attempt: concurrent right logins never count', async () => {
      const right = await Promise.all(
        Array.from({ length: 8 }, () =>
          api.post('/api/auth/login', { body: { username: 'jane.doe', password: DEFAULT_PASSWORD } }),
        ),
      );
      expect(right.map((answer) => answer.status)).toEqual(Array(8).fill(200));
      for (let i = 0; i < 9; i++) {
        const res = await api.post('/api/auth/login', {
          body: { username: 'jane.doe', password: `bad-${i}` },
        });
        expect(res.status).toBe(401);
      }
      // 9 failures: the right password still gets in, and a 10th failure then blocks.
      expect(
        (await api.post('/api/auth/login', { body: { username: 'jane.doe', password: DEFAULT_PASSWORD } }))
          .status,
      ).toBe(200);
      expect(
        (await api.post('/api/auth/login', { body: { username: 'jane.doe', password: 'bad-10' } })).status,
      ).toBe(401);
      expect(
        (await api.post('/api/auth/login', { body: { username: 'jane.doe', password: DEFAULT_PASSWORD } }))
          .status,
      ).toBe(429);
    });

    it('lets 30 concurrent right logins from one address in: only failures count (a campus NAT)', async () => {
      const users = await Promise.all(Array.from({ length: 30 }, () => makeUser(app.dataSource)));
      // Password checks are quick with the tests' hashing cost: the first ones are held until all 30 attempts
      // have reached the throttle (or been answered), so they are truly in flight together, as with production's
      // cost.
      const throttle = app.service.app.get(LoginThrottle);
      const hasher = app.service.app.get(PasswordHasher);
      const admit = throttle.admit.bind(throttle);
      const verify = hasher.verify.bind(hasher);
      let admits = 0;
      let answered = 0;
      let held = 0;
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const maybeOpen = () => {
        if (held >= 10 && admits + answered >= 30) open();
      };
      jest.spyOn(throttle, 'admit').mockImplementation(async (username, ip) => {
        const answer = await admit(username, ip);
        admits++;
        maybeOpen();
        return answer;
      });
      jest.spyOn(hasher, 'verify').mockImplementation(async (hash, password) => {
        held++;
        maybeOpen();
        await gate;
        return verify(hash, password);
      });
      const answers = await Promise.all(
        users.map(async (one) => {
          const answer = await api.post('/api/auth/login', {
            body: { username: one.username, password: DEFAULT_PASSWORD },
          });
          answered++;
          maybeOpen();
          return answer;
        }),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(30).fill(200));
    });

    it('names nobody with a username outside the rule: "admİn" is not admin, the Kelvin sign not kelvin', async () => {
      const admin = await makeUser(app.dataSource, { username: 'admin', admin: true });
      const kelvin = await makeUser(app.dataSource, { username: 'kelvin' });
      for (const [username, password] of [
        ['adm\u0130n', admin.password],
        ['ADM\u0130N', admin.password],
        ['\u212Aelvin', kelvin.password],
      ]) {
        const res = await api.post('/api/auth/login', { body: { username, password } });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ success: false, data: null, message: 'Invalid username or password' });
      }
    });

    it('counts only failures: successful logins never throttle', async () => {
      for (let i = 0; i < 12; i++) {
        const res = await api.post('/api/auth/login', {
          body: { username: 'jane.doe', password: DEFAULT_PASSWORD },
        });
        expect(res.status).toBe(200);
      }
    });
  });

  describe('bearer tokens', () => {
    it('requires an Authorization header of the Bearer scheme (case-insensitive)', async () => {
      expect((await api.get('/api/auth/me')).body).toEqual({
        success: false,
        data: null,
        message: 'Authentication required',
      });
      for (const header of [`Basic ${tokenFor(user)}`, 'Bearer', 'Bearer ', tokenFor(user)]) {
        const res = await api.get('/api/auth/me', { headers: { authorization: header } });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ success: false, data: null, message: 'Authentication required' });
      }
      const lower = await api.get('/api/auth/me', { headers: { authorization: `bearer ${tokenFor(user)}` } });
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
      const res = await api.get('/api/auth/me', { token: make(user) });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, data: null, message: 'Invalid or expired token' });
    });

    it('refuses the token of a user deleted after it was issued', async () => {
      const token = tokenFor(user);
      expect((await api.get('/api/auth/me', { token })).status).toBe(200);
      await app.dataSource.query('DELETE FROM users WHERE id = $1', [user.id]);
      // The user check may be cached for up to USER_CACHE_TTL_MS (5 s): let that much pass on the service's clock.
      advanceClock(app.config.userCacheTtlMs);
      const res = await api.get('/api/auth/me', { token });
      expect(res.status).toBe(401);
      expect(res.body.message).toBe('Invalid or expired token');
    });

    it('refuses a token once it expires, though it was accepted before (verified tokens are remembered)', async () => {
      const token = tokenFor(user, { expiresIn: 2 });
      expect((await api.get('/api/auth/me', { token })).status).toBe(200);
      expect((await api.get('/api/auth/me', { token })).status).toBe(200);
      // Past its expiry on the service's clock (exp is in whole seconds).
      advanceClock(3000);
      const res = await api.get('/api/auth/me', { token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, data: null, message: 'Invalid or expired token' });
    });

    it('refuses a remembered token once the password changed after it was issued', async () => {
      const token = tokenFor(user);
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
      const forged = tokenFor({ id: user.id, admin: true });
      // An admin-only route refuses a non-admin whose token claims admin.
      const res = await api.get('/api/users', { token: forged });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        success: false,
        data: null,
        message: 'You do not have permission to perform this action',
      });
    });
  });

  describe('GET /api/auth/me', () => {
    it('returns the caller as a User summary with current data', async () => {
      const token = tokenFor(user);
      await app.dataSource.query(`UPDATE users SET email = 'renamed@example.edu' WHERE id = $1`, [user.id]);
      const res = await api.get('/api/auth/me', { token });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('User retrieved successfully');
      expect(res.body.data).toMatchObject({
        id: user.id,
        username: 'Jane.Doe',
        email: 'renamed@example.edu',
        avatar_url: null,
      });
      expect(Object.keys(res.body.data)).toEqual(USER_ACCOUNT_FIELDS);
    });
  });

  describe('PUT /api/auth/password', () => {
    it('changes the password, returns a fresh token and refuses tokens issued before', async () => {
      const login = await api.post('/api/auth/login', {
        body: { username: 'jane.doe', password: DEFAULT_PASSWORD },
      });
      const oldToken = login.body.data.token;
      await nextSecond();
      const res = await api.put('/api/auth/password', {
        token: oldToken,
        body: { current_password: DEFAULT_PASSWORD, new_password: 'a-brand-new-password' },
      });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Password changed successfully');
      expect(res.body.data.user.id).toBe(user.id);
      expect(new Date(res.body.data.user.updated_at).getTime()).toBeGreaterThan(user.updated_at.getTime());

      expect((await api.get('/api/auth/me', { token: res.body.data.token })).status).toBe(200);
      const stale = await api.get('/api/auth/me', { token: oldToken });
      expect(stale.status).toBe(401);
      expect(stale.body.message).toBe('Invalid or expired token');

      expect(
        (await api.post('/api/auth/login', { body: { username: 'jane.doe', password: DEFAULT_PASSWORD } }))
          .status,
      ).toBe(401);
      expect(
        (
          await api.post('/api/auth/login', {
            body: { username: 'jane.doe', password: 'a-brand-new-password' },
          })
        ).status,
      ).toBe(200);
    });

    it('refuses a wrong current password and changes nothing', async () => {
      const token = tokenFor(user);
      const res = await api.put('/api/auth/password', {
        token,
        body: { current_password: 'wrong-password', new_password: 'a-brand-new-password' },
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, data: null, message: 'Current password is incorrect' });
      expect((await api.get('/api/auth/me', { token })).status).toBe(200);
      expect(
        (await api.post('/api/auth/login', { body: { username: 'jane.doe', password: DEFAULT_PASSWORD } }))
          .status,
      ).toBe(200);
    });

    it('counts a wrong current password as a failed login for the username and the address: the 11th is 429', async () => {
      const token = tokenFor(user);
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
      const login = await api.post('/api/auth/login', {
        body: { username: 'jane.doe', password: DEFAULT_PASSWORD },
      });
      expect(login.status).toBe(429);
      const other = await makeUser(app.dataSource);
      expect(
        (
          await api.post('/api/auth/login', {
            body: { username: other.username, password: DEFAULT_PASSWORD },
          })
        ).status,
      ).toBe(429);
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
      const res = await api.put('/api/auth/password', { token: tokenFor(user), body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message });
    });

    it('counts characters as code points (8 emoji are a valid password)', async () => {
      const res = await api.put('/api/auth/password', {
        token: tokenFor(user),
        body: { current_password: DEFAULT_PASSWORD, new_password: '😀'.repeat(8) },
      });
      expect(res.status).toBe(200);
    });
  });

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
});

const INVALID = { success: false, data: null, message: 'Invalid or expired token' };
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('Integration tokens (/api/tokens, docs/api.md §14)', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let adminToken: string;

  beforeEach(async () => {
    await app.reset();
    await app.dataSource.query('TRUNCATE integration_tokens');
    admin = await makeUser(app.dataSource, { admin: true });
    adminToken = tokenFor(admin);
  });
  afterEach(() => jest.restoreAllMocks());

  /** Moves the service's clock (its token and user caches) forward, instead of waiting for them to expire. */
  const advanceClock = (ms: number) => {
    const clock = app.service.app.get(Clock);
    const now = clock.now.bind(clock);
    jest.spyOn(clock, 'now').mockImplementation(() => now() + ms);
  };

  const create = (body: unknown) => api.post('/api/tokens', { token: adminToken, body });
  const newToken = async (scopes: string[], extra: Record<string, unknown> = {}) => {
    const res = await create({ name: `token ${scopes.join('+')}`, scopes, ...extra });
    expect(res.status).toBe(201);
    return res.body.data as { id: number; token: string };
  };

  describe('management', () => {
    it('creates a token, shows it once, stores only its SHA-256 and audits name and scopes', async () => {
      const res = await create({ name: 'Entra ID provisioning', scopes: ['scim'] });
      expect(res.status).toBe(201);
      expect(res.body.message).toBe('Token created');
      const { token, ...shown } = res.body.data;
      expect(token).toMatch(/^mas_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(32);
      expect(shown).toEqual({
        id: expect.any(Number),
        name: 'Entra ID provisioning',
        scopes: ['scim'],
        created_at: expect.stringMatching(TIMESTAMP),
        expires_at: null,
        last_used_at: null,
      });

      const [stored] = await app.dataSource.query('SELECT token_hash FROM integration_tokens WHERE id = $1', [
        shown.id,
      ]);
      expect(stored.token_hash).toEqual(createHash('sha256').update(token).digest());
      const dump = JSON.stringify(await app.dataSource.query('SELECT * FROM integration_tokens'));
      expect(dump).not.toContain(token.slice(4));

      const list = await api.get('/api/tokens', { token: adminToken });
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ success: true, message: 'Tokens retrieved successfully', data: [shown] });

      const audit = await app.dataSource.query(
        `SELECT actor_id, action, target_type, target_ids, summary FROM audit_events WHERE action LIKE 'token.%'`,
      );
      expect(audit).toEqual([
        {
          actor_id: Number(admin.id),
          action: 'token.create',
          target_type: 'token',
          target_ids: [String(shown.id)],
          summary: { name: 'Entra ID provisioning', scopes: ['scim'] },
        },
      ]);
      expect(JSON.stringify(audit)).not.toContain(token);
    });

    it('keeps a future expires_at and lists expired tokens but never revoked ones, by id', async () => {
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const first = await newToken(['events'], { expires_at: expiresAt });
      const second = await newToken(['scim', 'events'], { expires_at: null });
      const third = await newToken(['scim']);
      await app.dataSource.query(
        `UPDATE integration_tokens SET expires_at = now() - interval '1 day' WHERE id = $1`,
        [second.id],
      );
      expect((await api.delete(`/api/tokens/${third.id}`, { token: adminToken })).body).toEqual({
        success: true,
        data: null,
        message: 'Token revoked',
      });
      const list = (await api.get('/api/tokens', { token: adminToken })).body.data;
      expect(list.map((t: { id: number }) => t.id)).toEqual([first.id, second.id]);
      expect(list[0]).toMatchObject({ scopes: ['events'], expires_at: expiresAt });
      expect(list[1]).toMatchObject({ scopes: ['scim', 'events'] });
      expect(list[0]).not.toHaveProperty('token');
    });

    it.each([
      [{ scopes: ['scim'] }, 'name must be 1-100 characters'],
      [{ name: '', scopes: ['scim'] }, 'name must be 1-100 characters'],
      [{ name: 'x'.repeat(101), scopes: ['scim'] }, 'name must be 1-100 characters'],
      [{ name: 'a' }, 'scopes must be a non-empty array of: scim, events, exports'],
      [{ name: 'a', scopes: [] }, 'scopes must be a non-empty array of: scim, events, exports'],
      [{ name: 'a', scopes: ['admin'] }, 'scopes must be a non-empty array of: scim, events, exports'],
      [{ name: 'a', scopes: 'scim' }, 'scopes must be a non-empty array of: scim, events, exports'],
      [
        { name: 'a', scopes: ['scim'], expires_at: '2020-01-01T00:00:00Z' },
        'expires_at must be a future RFC 3339 timestamp',
      ],
      [
        { name: 'a', scopes: ['scim'], expires_at: 'tomorrow' },
        'expires_at must be a future RFC 3339 timestamp',
      ],
      [
        { name: 'a', scopes: ['scim'], expires_at: 1893456000 },
        'expires_at must be a future RFC 3339 timestamp',
      ],
      [{ name: 'a', scopes: ['scim'], token: 'mas_x' }, 'property token should not exist'],
    ])('refuses %j with 400 %s and creates nothing', async (body, message) => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message });
      expect(await app.dataSource.query('SELECT id FROM integration_tokens')).toEqual([]);
    });

    it('answers 404 Token not found for an unknown or already revoked id, and audits the revocation', async () => {
      const { id } = await newToken(['events']);
      expect((await api.delete(`/api/tokens/${id}`, { token: adminToken })).status).toBe(200);
      for (const path of [`/api/tokens/${id}`, '/api/tokens/999999']) {
        const res = await api.delete(path, { token: adminToken });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ success: false, data: null, message: 'Token not found' });
      }
      expect((await api.delete('/api/tokens/abc', { token: adminToken })).body.message).toBe(
        'token_id must be a positive integer',
      );
      const audit = await app.dataSource.query(
        `SELECT action, target_ids, summary FROM audit_events WHERE action = 'token.revoke'`,
      );
      expect(audit).toEqual([
        {
          action: 'token.revoke',
          target_ids: [String(id)],
          summary: { name: 'token events', scopes: ['events'] },
        },
      ]);
    });

    it('is for administrators only', async () => {
      const user = tokenFor(await makeUser(app.dataSource));
      expect((await api.get('/api/tokens', { token: user })).status).toBe(403);
      expect(
        (await api.post('/api/tokens', { token: user, body: { name: 'a', scopes: ['scim'] } })).status,
      ).toBe(403);
      expect((await api.get('/api/tokens')).status).toBe(401);
    });
  });

  describe('use', () => {
    it('reads GET /api/events with the events scope, with a null actor and no admin password', async () => {
      const { token } = await newToken(['events']);
      const res = await api.get('/api/events', { token });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Events retrieved successfully');
    });

    it('is refused everywhere its scope does not apply, with 401 Invalid or expired token', async () => {
      const events = (await newToken(['events'])).token;
      const scim = (await newToken(['scim'])).token;
      const both = (await newToken(['scim', 'events'])).token;
      const elsewhere = [
        ['GET', '/api/auth/me'],
        ['GET', '/api/users'],
        ['GET', '/api/modules'],
        ['GET', '/api/tokens'],
        ['GET', '/api/audit'],
        ['GET', '/api/webhooks'],
      ];
      for (const token of [events, scim, both]) {
        for (const [method, path] of elsewhere) {
          const res = await api.request(method, path, { token });
          expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 401, body: INVALID });
        }
      }
      // A token may not make tokens either.
      const made = await api.post('/api/tokens', { token: both, body: { name: 'x', scopes: ['events'] } });
      expect(made.body).toEqual(INVALID);
      // The feed needs the events scope.
      expect((await api.get('/api/events', { token: scim })).body).toEqual(INVALID);
      expect((await api.get('/api/events', { token: both })).status).toBe(200);
    });

    it('refuses a token of the right shape that was never issued, and any other mas_ text', async () => {
      const { token } = await newToken(['events']);
      const forged = `mas_${Buffer.alloc(32, 1).toString('base64url')}`;
      for (const text of [forged, `${token}x`, token.slice(0, -1), 'mas_', `mas_${'!'.repeat(43)}`]) {
        const res = await api.get('/api/events', { token: text });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(INVALID);
      }
    });

    it('stops working at once on this replica when revoked, and within 5 s when revoked on another', async () => {
      const first = await newToken(['events']);
      expect((await api.get('/api/events', { token: first.token })).status).toBe(200);
      await api.delete(`/api/tokens/${first.id}`, { token: adminToken });
      expect((await api.get('/api/events', { token: first.token })).body).toEqual(INVALID);

      const second = await newToken(['events']);
      expect((await api.get('/api/events', { token: second.token })).status).toBe(200);
      // Another replica revokes it: this one may answer from its cache for at most USER_CACHE_TTL_MS (5 s).
      await app.dataSource.query('UPDATE integration_tokens SET revoked_at = now() WHERE id = $1', [
        second.id,
      ]);
      advanceClock(app.config.userCacheTtlMs);
      expect((await api.get('/api/events', { token: second.token })).body).toEqual(INVALID);
    });

    it('stops working at its expiry, though it was accepted just before', async () => {
      const expiresAt = new Date(Date.now() + 60_000).toISOString();
      const { token } = await newToken(['events'], { expires_at: expiresAt });
      expect((await api.get('/api/events', { token })).status).toBe(200);
      advanceClock(60_000);
      expect((await api.get('/api/events', { token })).body).toEqual(INVALID);
    });

    it('sets last_used_at on the first use, then at most once a minute', async () => {
      const { id, token } = await newToken(['events']);
      const lastUsed = async () =>
        (await api.get('/api/tokens', { token: adminToken })).body.data.find(
          (t: { id: number }) => t.id === id,
        ).last_used_at as string | null;
      expect(await lastUsed()).toBeNull();
      expect((await api.get('/api/events', { token })).status).toBe(200);
      const first = await lastUsed();
      expect(first).toMatch(TIMESTAMP);
      // Pretend the first use was 30 s ago: a use now does not write it again.
      await app.dataSource.query(
        `UPDATE integration_tokens SET last_used_at = last_used_at - interval '30 seconds' WHERE id = $1`,
        [id],
      );
      const earlier = await lastUsed();
      expect((await api.get('/api/events', { token })).status).toBe(200);
      expect(await lastUsed()).toBe(earlier);
      // A minute later on the service's clock (and in the table), the next use writes it.
      await app.dataSource.query(
        `UPDATE integration_tokens SET last_used_at = last_used_at - interval '1 minute' WHERE id = $1`,
        [id],
      );
      const old = await lastUsed();
      advanceClock(60_000);
      expect((await api.get('/api/events', { token })).status).toBe(200);
      expect(Date.parse((await lastUsed())!)).toBeGreaterThan(Date.parse(old!));
    });

    it('does not set last_used_at on a call it refuses for the scope', async () => {
      const { id, token } = await newToken(['events']);
      const lastUsed = async () =>
        (await api.get('/api/tokens', { token: adminToken })).body.data.find(
          (t: { id: number }) => t.id === id,
        ).last_used_at as string | null;
      expect((await api.get('/api/users', { token })).body).toEqual(INVALID);
      expect((await api.get('/api/users/export.csv', { token })).body).toEqual(INVALID);
      expect(await lastUsed()).toBeNull();
      expect((await api.get('/api/events', { token })).status).toBe(200);
      expect(await lastUsed()).toMatch(TIMESTAMP);
    });
  });
});
