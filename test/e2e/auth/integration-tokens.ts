// Part of test/auth.e2e-spec.ts: integration tokens, their management and use.
import { createHash } from 'node:crypto';
import { jest } from '@jest/globals';
import { type UsedTestApp } from '../../support/app.js';
import { advanceClock } from '../../support/clock.js';
import { makeUser, tokenFor, type UserRow } from '../../support/factories.js';

const INVALID = { success: false, data: null, message: 'Invalid or expired token' };
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export function integrationTokens({ app, api }: UsedTestApp): void {
  let admin: UserRow;
  let adminToken: string;

  beforeEach(async () => {
    await app.reset();
    await app.dataSource.query('TRUNCATE integration_tokens');
    admin = await makeUser(app.dataSource, { admin: true });
    adminToken = tokenFor(admin);
  });
  afterEach(() => jest.restoreAllMocks());

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
    /** The token's `last_used_at` as the admin's list shows it. */
    const lastUsedOf = async (id: number) =>
      (await api.get('/api/tokens', { token: adminToken })).body.data.find((t: { id: number }) => t.id === id)
        .last_used_at as string | null;

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
      advanceClock(app, app.config.userCacheTtlMs);
      expect((await api.get('/api/events', { token: second.token })).body).toEqual(INVALID);
    });

    it('stops working at its expiry, though it was accepted just before', async () => {
      const expiresAt = new Date(Date.now() + 60_000).toISOString();
      const { token } = await newToken(['events'], { expires_at: expiresAt });
      expect((await api.get('/api/events', { token })).status).toBe(200);
      advanceClock(app, 60_000);
      expect((await api.get('/api/events', { token })).body).toEqual(INVALID);
    });

    it('sets last_used_at on the first use, then at most once a minute', async () => {
      const { id, token } = await newToken(['events']);
      const lastUsed = () => lastUsedOf(id);
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
      advanceClock(app, 60_000);
      expect((await api.get('/api/events', { token })).status).toBe(200);
      expect(Date.parse((await lastUsed())!)).toBeGreaterThan(Date.parse(old!));
    });

    it('does not set last_used_at on a call it refuses for the scope', async () => {
      const { id, token } = await newToken(['events']);
      const lastUsed = () => lastUsedOf(id);
      expect((await api.get('/api/users', { token })).body).toEqual(INVALID);
      expect((await api.get('/api/users/export.csv', { token })).body).toEqual(INVALID);
      expect(await lastUsed()).toBeNull();
      expect((await api.get('/api/events', { token })).status).toBe(200);
      expect(await lastUsed()).toMatch(TIMESTAMP);
    });
  });
}
