// Part of test/http.e2e-spec.ts: mass assignment and bounds.
import { type UsedTestApp } from '../../support/app.js';
import { makeUser, tokenFor, type UserRow } from '../../support/factories.js';

/** Mass assignment and the bounds of bodies, id lists and paging, against the real service. */
export function massAssignmentTests({ app, api }: UsedTestApp): void {
  let admin: UserRow;
  let member: UserRow;
  let adminToken: string;
  let memberToken: string;

  beforeEach(async () => {
    await app.reset();
    admin = await makeUser(app.dataSource, { admin: true });
    member = await makeUser(app.dataSource);
    adminToken = tokenFor(admin);
    memberToken = tokenFor(member);
  });

  const userRow = async (id: number) =>
    (await app.dataSource.query(`SELECT * FROM users WHERE id = $1`, [id]))[0] as Record<string, unknown>;
  const count = async (table: string) =>
    Number((await app.dataSource.query(`SELECT count(*)::int AS n FROM ${table}`))[0].n);

  describe('no body sets id, timestamps, the password hash or (for a non-admin) admin', () => {
    const forbidden = {
      id: 1,
      created_at: '2000-01-01T00:00:00.000Z',
      updated_at: '2000-01-01T00:00:00.000Z',
      password_hash: '$argon2id$v=19$m=19456,t=2,p=1$forged',
    };

    it.each(Object.entries(forbidden))(
      'POST /api/users with %s: 400, nothing created',
      async (field, value) => {
        const before = await count('users');
        const res = await api.post('/api/users', {
          token: adminToken,
          body: {
            username: 'massive',
            email: 'massive@example.edu',
            password: 'long-enough-password',
            [field]: value,
          },
        });
        expect(res.status).toBe(400);
        expect(res.body.message).toContain(`property ${field} should not exist`);
        expect(await count('users')).toBe(before);
      },
    );

    it.each(Object.entries(forbidden))(
      'PUT /api/users/{id} with %s: 400, row unchanged',
      async (field, value) => {
        const before = await userRow(member.id);
        const res = await api.put(`/api/users/${member.id}`, {
          token: adminToken,
          body: { email: 'changed@example.edu', [field]: value },
        });
        expect(res.status).toBe(400);
        expect(await userRow(member.id)).toEqual(before);
      },
    );

    it.each(Object.entries(forbidden))(
      'POST /api/modules with %s: 400, nothing created',
      async (field, value) => {
        const res = await api.post('/api/modules', {
          token: adminToken,
          body: { code: 'MAS101', year: 2026, credits: 15, [field]: value },
        });
        expect(res.status).toBe(400);
        expect(await count('modules')).toBe(0);
      },
    );

    it('a non-admin cannot make themselves admin through the one body they may send', async () => {
      const before = await userRow(member.id);
      const res = await api.put('/api/auth/password', {
        token: memberToken,
        body: { current_password: member.password, new_password: 'another-long-password', admin: true },
      });
      expect(res.status).toBe(400);
      expect(await userRow(member.id)).toEqual(before);
      // And the admin-only routes stay closed to them.
      const put = await api.put(`/api/users/${member.id}`, { token: memberToken, body: { admin: true } });
      expect(put.status).toBe(403);
      expect((await userRow(member.id)).admin).toBe(false);
    });
  });

  describe('JSON size and shape', () => {
    it('answers 413 to a JSON body of 1 MiB + 1 byte and 400 (not 413) to one just under 1 MiB', async () => {
      const pad = (size: number) => {
        const head = '{"code":"ABC123","year":2026,"credits":15,"description":"';
        return head + 'x'.repeat(size - head.length - 2) + '"}';
      };
      const over = await api.post('/api/modules', { token: adminToken, body: pad(1_048_577) });
      expect(over.status).toBe(413);
      expect(over.body).toEqual({ success: false, data: null, message: 'Request body too large' });
      const under = await api.post('/api/modules', { token: adminToken, body: pad(1_048_576) });
      expect(under.status).toBe(400);
      expect(await count('modules')).toBe(0);
    });

    it('answers deep nesting with a clean 400, quickly, and keeps serving', async () => {
      const depth = 200_000;
      const started = Date.now();
      const res = await api.post('/api/modules', {
        token: adminToken,
        body: `{"code":${'['.repeat(depth)}${']'.repeat(depth)},"year":2026,"credits":15}`,
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message: 'Malformed JSON body' });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect((await api.get('/api/health')).status).toBe(200);
    });

    it('answers a body with 60 000 unknown keys with a clean 400, quickly', async () => {
      const wide = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, i]));
      const started = Date.now();
      const res = await api.post('/api/modules', {
        token: adminToken,
        body: { code: 'ABC123', year: 2026, credits: 15, ...wide },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message: 'Malformed JSON body' });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await count('modules')).toBe(0);
    });
  });

  describe('id lists over their caps', () => {
    it('DELETE /api/modules/bulk with 1001 ids: 400, nothing deleted', async () => {
      await api.post('/api/modules', {
        token: adminToken,
        body: { code: 'CAP101', year: 2026, credits: 15 },
      });
      const res = await api.delete('/api/modules/bulk', {
        token: adminToken,
        body: { module_ids: Array.from({ length: 1001 }, (_, i) => i + 1) },
      });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('At most 1000 module IDs are allowed per request');
      expect(await count('modules')).toBe(1);
    });

    it('POST /api/users/bulk with 501 users: 400, nothing created', async () => {
      const before = await count('users');
      const users = Array.from({ length: 501 }, (_, i) => ({
        username: `bulk${i}`,
        email: `bulk${i}@example.edu`,
        password: 'long-enough-password',
      }));
      const res = await api.post('/api/users/bulk', { token: adminToken, body: { users } });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('At most 500 users are allowed per request');
      expect(await count('users')).toBe(before);
    });
  });

  describe('page and per_page extremes', () => {
    it.each([
      '?per_page=0',
      '?per_page=101',
      '?per_page=-1',
      '?per_page=1e400',
      '?per_page=99999999999999999999999',
      '?page=0',
      '?page=-5',
      '?page=99999999999999999999999',
      '?page=9007199254740993&per_page=100',
      '?page=1.5',
      '?per_page=',
    ])(
      'GET /api/modules%s: a 200 within the bounds or a 400 naming the parameter, never a 500',
      async (query) => {
        const res = await api.get(`/api/modules${query}`, { token: adminToken });
        expect([200, 400]).toContain(res.status);
        if (res.status === 200) {
          expect(res.body.data.per_page).toBeGreaterThanOrEqual(1);
          expect(res.body.data.per_page).toBeLessThanOrEqual(100);
          expect(res.body.data.page).toBeGreaterThanOrEqual(1);
        } else {
          expect(res.body.message).toMatch(/page|per_page/);
        }
      },
    );
  });
}
