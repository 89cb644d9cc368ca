// Part of test/auth.e2e-spec.ts: POST /api/auth/login.
import { jest } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { LoginThrottle } from '../../../src/auth/login-throttle.js';
import { PasswordHasher } from '../../../src/users/password-hasher.js';
import { DEFAULT_PASSWORD, makeUser } from '../../support/factories.js';
import { failure } from '../../support/http.js';
import { accountJson } from '../../support/users-helpers.js';
import { type AuthContext } from './context.js';

export function loginTests(ctx: AuthContext): void {
  const { app, api, given, signIn } = ctx;

  describe('POST /api/auth/login', () => {
    it('signs in case-insensitively and returns an HS256 token with sub, admin, iat and exp', async () => {
      const res = await signIn('jane.DOE', DEFAULT_PASSWORD);
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      expect(res.body.message).toBe('Login successful');
      expect(res.body.data.user).toEqual(accountJson(given.user));
      const decoded = jwt.decode(res.body.data.token, { complete: true })!;
      expect(decoded.header.alg).toBe('HS256');
      const claims = decoded.payload as jwt.JwtPayload;
      expect(claims).toEqual({
        sub: given.user.id,
        admin: false,
        iat: expect.any(Number),
        exp: claims.iat! + 3600,
      });
      expect(res.body.data.expires_at).toBe(new Date(claims.exp! * 1000).toISOString());
      expect(res.body.data.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(JSON.stringify(res.body)).not.toContain('password');
    });

    it('answers a wrong password and an unknown username with the same 401', async () => {
      const wrong = await signIn('jane.doe', 'not-the-password');
      const unknown = await signIn('nobody', 'not-the-password');
      for (const res of [wrong, unknown]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(failure('Invalid username or password'));
      }
    });

    it('answers a username with a NUL character as a failed login, not a server error', async () => {
      const res = await signIn('jane\u0000doe', DEFAULT_PASSWORD);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(failure('Invalid username or password'));
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
        const res = await signIn('jane.doe', `wrong-${i}`);
        expect(res.status).toBe(401);
      }
      const blocked = await signIn('JANE.DOE', DEFAULT_PASSWORD);
      expect(blocked.status).toBe(429);
      expect(blocked.body).toEqual(failure('Too many requests, try again later'));
      // Refused before the body is validated.
      expect((await api.post('/api/auth/login', { body: { username: 'jane.doe' } })).status).toBe(429);
    });

    it('throttles a client address after 10 failures across usernames', async () => {
      for (let i = 0; i < 10; i++) {
        expect((await signIn(`ghost${i}`, 'x')).status).toBe(401);
      }
      const res = await signIn('jane.doe', DEFAULT_PASSWORD);
      expect(res.status).toBe(429);
      // Throttling precedes body validation; only the framing of the body (step 0) comes first.
      expect((await api.post('/api/auth/login', { body: {} })).status).toBe(429);
      expect((await api.post('/api/auth/login', { body: '{' })).status).toBe(400);
    });

    it('admits at most 10 of 100 concurrent wrong logins for one username (the rest 429)', async () => {
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) => signIn('jane.doe', `wrong-${i}`)),
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
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => signIn(`ghost${i}`, 'x')));
      expect(answers.filter((answer) => answer.status === 401)).toHaveLength(10);
      expect(answers.filter((answer) => answer.status === 429)).toHaveLength(50);
    });

    it('frees the place of a successful attempt: concurrent right logins never count', async () => {
      const right = await Promise.all(Array.from({ length: 8 }, () => signIn('jane.doe', DEFAULT_PASSWORD)));
      expect(right.map((answer) => answer.status)).toEqual(Array(8).fill(200));
      for (let i = 0; i < 9; i++) {
        const res = await signIn('jane.doe', `bad-${i}`);
        expect(res.status).toBe(401);
      }
      // 9 failures: the right password still gets in, and a 10th failure then blocks.
      expect((await signIn('jane.doe', DEFAULT_PASSWORD)).status).toBe(200);
      expect((await signIn('jane.doe', 'bad-10')).status).toBe(401);
      expect((await signIn('jane.doe', DEFAULT_PASSWORD)).status).toBe(429);
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
          const answer = await signIn(one.username, DEFAULT_PASSWORD);
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
        const res = await signIn(username, password);
        expect(res.status).toBe(401);
        expect(res.body).toEqual(failure('Invalid username or password'));
      }
    });

    it('counts only failures: successful logins never throttle', async () => {
      for (let i = 0; i < 12; i++) {
        const res = await signIn('jane.doe', DEFAULT_PASSWORD);
        expect(res.status).toBe(200);
      }
    });
  });
}
