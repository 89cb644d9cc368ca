// Validators and preconditions (docs/api.md §17): ETag, If-None-Match → 304, If-Match → 412, REQUIRE_IF_MATCH → 428.
import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import { useTestApp } from './support/app.js';
import { assignRole, makeModule, makeUser, tokenFor } from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';
import { waitFor } from './support/wait-for.js';
import { makeWebhook } from './support/webhook-fixtures.js';

const STRONG_ETAG = /^"[A-Za-z0-9_-]{22}"$/;
const CHANGED = 'The resource has changed; reload it and try again';

describe('validators', () => {
  const { app, api } = useTestApp();
  let token: string;
  let adminId: number;
  let moduleId: number;
  let otherModuleId: number;
  let memberId: number;
  let webhookId: number;
  beforeEach(async () => {
    const fresh = await freshAdmin(app);
    token = fresh.token;
    adminId = fresh.admin.id;
    moduleId = (await makeModule(app.dataSource)).id;
    otherModuleId = (await makeModule(app.dataSource)).id;
    memberId = (await makeUser(app.dataSource)).id;
    await assignRole(app.dataSource, memberId, moduleId, ModuleRole.Tutor);
    webhookId = (await makeWebhook(app.dataSource)).id;
  });

  const etag = async (path: string): Promise<string> => {
    const res = await api.get(path, { token });
    expect(res.status).toBe(200);
    return res.headers.get('etag') ?? '';
  };

  it('answers a strong ETag and Cache-Control on the four single reads, and 304 for it or *', async () => {
    for (const path of [
      `/api/modules/${moduleId}`,
      `/api/users/${memberId}`,
      '/api/auth/me',
      `/api/webhooks/${webhookId}`,
    ]) {
      const res = await api.get(path, { token });
      expect({ path, status: res.status, cache: res.headers.get('cache-control') }).toEqual({
        path,
        status: 200,
        cache: 'private, no-cache',
      });
      const tag = res.headers.get('etag') ?? '';
      expect(tag).toMatch(STRONG_ETAG);
      for (const ifNoneMatch of [tag, '*', `"stale", W/${tag}`]) {
        const again = await api.get(path, { token, headers: { 'if-none-match': ifNoneMatch } });
        expect({ path, status: again.status, body: again.body, etag: again.headers.get('etag') }).toEqual({
          path,
          status: 304,
          body: undefined,
          etag: tag,
        });
      }
      const stale = await api.get(path, { token, headers: { 'if-none-match': '"stale"' } });
      expect(stale.status).toBe(200);
      expect(stale.body.success).toBe(true);
    }
  });

  it('changes the module ETag with its members, their roles, statuses and User summaries, not with another module', async () => {
    const path = `/api/modules/${moduleId}`;
    const seen = new Set([await etag(path)]);
    const studentId = (await makeUser(app.dataSource)).id;
    const changes: (() => Promise<unknown>)[] = [
      () => assignRole(app.dataSource, studentId, moduleId, ModuleRole.Student),
      () => assignRole(app.dataSource, memberId, moduleId, ModuleRole.Lecturer),
      () =>
        api.request('PATCH', `/api/modules/${moduleId}/members`, {
          token,
          body: { user_ids: [memberId], status: 'inactive' },
        }),
      () => api.put(`/api/users/${studentId}`, { token, body: { display_name: 'A New Name' } }),
    ];
    for (const change of changes) {
      await change();
      const tag = await etag(path);
      expect({ change: changes.indexOf(change), repeated: seen.has(tag) }).toEqual({
        change: changes.indexOf(change),
        repeated: false,
      });
      seen.add(tag);
    }
    const before = await etag(path);
    await assignRole(app.dataSource, memberId, otherModuleId, ModuleRole.Student);
    expect(
      await api.put(`/api/modules/${otherModuleId}`, {
        token,
        body: { code: 'OTH123', year: 2026, credits: 5 },
      }),
    ).toMatchObject({ status: 200 });
    expect(await etag(path)).toBe(before);
  });

  it('never answers 304 for what would be a 401, 403 or 404', async () => {
    const headers = { 'if-none-match': '*' };
    const outsider = await makeUser(app.dataSource);
    expect((await api.get(`/api/modules/${moduleId}`, { headers })).status).toBe(401);
    expect((await api.get(`/api/modules/${moduleId}`, { token: tokenFor(outsider), headers })).status).toBe(
      403,
    );
    expect((await api.get(`/api/users/${memberId}`, { token: tokenFor(outsider), headers })).status).toBe(
      403,
    );
    expect((await api.get('/api/modules/999999', { token, headers })).status).toBe(404);
    expect((await api.get('/api/webhooks/999999', { token, headers })).status).toBe(404);
  });

  it('answers 412 to a stale If-Match on every write kind, changing nothing', async () => {
    const headers = { 'if-match': '"stale", W/"older"' };
    const writes = [
      { path: `/api/modules/${moduleId}`, put: { code: 'CHG123', year: 2027, credits: 10 } },
      { path: `/api/users/${memberId}`, put: { display_name: 'Changed' } },
      { path: `/api/webhooks/${webhookId}`, put: { description: 'changed' } },
    ];
    for (const { path, put } of writes) {
      const before = await api.get(path, { token });
      const res = await api.put(path, { token, headers, body: put });
      expect({ path, status: res.status, message: res.body.message }).toEqual({
        path,
        status: 412,
        message: CHANGED,
      });
      expect((await api.delete(path, { token, headers })).status).toBe(412);
      expect((await api.get(path, { token })).body).toEqual(before.body);
    }
    const before = await api.get(`/api/modules/${moduleId}`, { token });
    const patch = await api.request('PATCH', `/api/modules/${moduleId}/members`, {
      token,
      headers,
      body: { user_ids: [memberId], status: 'inactive' },
    });
    expect(patch.status).toBe(412);
    expect((await api.get(`/api/modules/${moduleId}`, { token })).body).toEqual(before.body);
  });

  it('accepts the current ETag, W/ of it and *, and answers the ETag the next read gives', async () => {
    for (const [path, put] of [
      [`/api/modules/${moduleId}`, { code: 'REN123', year: 2026, credits: 15 }],
      [`/api/users/${memberId}`, { display_name: 'Renamed' }],
      [`/api/webhooks/${webhookId}`, { description: 'renamed' }],
    ] as const) {
      const res = await api.put(path, {
        token,
        headers: { 'if-match': `"x", W/${await etag(path)}` },
        body: put,
      });
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.headers.get('etag')).toBe(await etag(path));
      expect((await api.put(path, { token, headers: { 'if-match': '*' }, body: put })).status).toBe(200);
    }
    const path = `/api/modules/${moduleId}`;
    const patch = await api.request('PATCH', `${path}/members`, {
      token,
      headers: { 'if-match': await etag(path) },
      body: { user_ids: [memberId], status: 'completed' },
    });
    expect(patch.status).toBe(200);
    expect(patch.headers.get('etag')).toBe(await etag(path));
    const removed = await api.delete(`/api/webhooks/${webhookId}`, {
      token,
      headers: { 'if-match': await etag(`/api/webhooks/${webhookId}`) },
    });
    expect(removed.status).toBe(200);
  });

  it('checks If-Match after 404 and before the operation’s own 409', async () => {
    const headers = { 'if-match': '"stale"' };
    expect(
      (await api.put('/api/webhooks/999999', { token, headers, body: { description: 'x' } })).status,
    ).toBe(404);
    const taken = await makeModule(app.dataSource);
    const duplicate = { code: taken.code, year: taken.year, credits: 5 };
    expect((await api.put(`/api/modules/${moduleId}`, { token, headers, body: duplicate })).status).toBe(412);
    expect((await api.put(`/api/modules/${moduleId}`, { token, body: duplicate })).status).toBe(409);
    const stranger = await makeUser(app.dataSource);
    const body = { user_ids: [stranger.id], status: 'inactive' };
    expect(
      (await api.request('PATCH', `/api/modules/${moduleId}/members`, { token, headers, body })).status,
    ).toBe(412);
    expect((await api.request('PATCH', `/api/modules/${moduleId}/members`, { token, body })).status).toBe(
      409,
    );
    expect(adminId).toBeGreaterThan(0);
  });

  it('answers an admin’s own 403s before a stale If-Match’s 412', async () => {
    const headers = { 'if-match': '"stale"' };
    const self = `/api/users/${adminId}`;
    expect((await api.put(self, { token, headers, body: { admin: false } })).body.message).toBe(
      'You cannot remove your own admin rights',
    );
    expect((await api.delete(self, { token, headers })).status).toBe(403);
    expect((await api.put(self, { token, headers, body: { given_name: 'Ada' } })).status).toBe(412);
  });

  /**
   * A change another transaction commits while the write waits for the row: If-Match is compared with the row the
   * write holds, so the write that read before that change is refused and does not overwrite it.
   */
  it.each([
    ['user', 'users', () => `/api/users/${memberId}`, { given_name: 'Mine' }, 'display_name'],
    ['webhook', 'webhooks', () => `/api/webhooks/${webhookId}`, { enabled: false }, 'description'],
  ])(
    'compares If-Match with the %s as the write holds it, not as it was before the write waited',
    async (_kind, table, pathOf, body, changedColumn) => {
      const path = pathOf();
      const id = Number(path.split('/').pop());
      const read = await etag(path);
      const blocker = app.dataSource.createQueryRunner();
      await blocker.connect();
      try {
        await blocker.startTransaction();
        await blocker.query(`UPDATE ${table} SET ${changedColumn} = 'Changed meanwhile' WHERE id = $1`, [id]);
        const write = api.put(path, { token, headers: { 'if-match': read }, body });
        await waitFor(
          async () =>
            (
              await app.dataSource.query<unknown[]>(
                `SELECT 1 FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'`,
              )
            ).length > 0,
          { what: 'the write waiting for the row' },
        );
        await blocker.commitTransaction();
        const answer = await write;
        expect([answer.status, answer.body.message]).toEqual([412, CHANGED]);
      } finally {
        if (blocker.isTransactionActive) await blocker.rollbackTransaction();
        await blocker.release();
      }
      const [row] = await app.dataSource.query<Record<string, unknown>[]>(
        `SELECT * FROM ${table} WHERE id = $1`,
        [id],
      );
      expect(row[changedColumn]).toBe('Changed meanwhile');
      const [field, value] = Object.entries(body)[0];
      expect(row[field]).not.toBe(value);
    },
  );
});

describe('REQUIRE_IF_MATCH=true', () => {
  const { app, api } = useTestApp({ requireIfMatch: true });

  it('answers 428 to a write without If-Match, and takes one with it', async () => {
    const { token } = await freshAdmin(app);
    const { id } = await makeWebhook(app.dataSource);
    const res = await api.put(`/api/webhooks/${id}`, { token, body: { description: 'x' } });
    expect(res.status).toBe(428);
    expect(res.body.message).toBe('Precondition required: send If-Match with the ETag of your last read');
    expect((await api.delete(`/api/webhooks/${id}`, { token })).status).toBe(428);
    const tag = (await api.get(`/api/webhooks/${id}`, { token })).headers.get('etag') ?? '';
    expect(
      (
        await api.put(`/api/webhooks/${id}`, {
          token,
          headers: { 'if-match': tag },
          body: { description: 'x' },
        })
      ).status,
    ).toBe(200);
  });
});
