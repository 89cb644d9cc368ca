// HTTP conventions for integrators (docs/api.md §17): paging links, validators, preconditions, idempotent retries.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import { startTestApp, type TestApp, useTestApp } from './support/app.js';
import { assignRole, makeModule, makeUser, tokenFor } from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';
import { IdempotencyPrune } from '../src/idempotency/idempotency.module.js';
import { client, failure } from './support/http.js';
import { waitFor } from './support/wait-for.js';
import { makeWebhook } from './support/webhook-fixtures.js';

/** The `Link` header as `{rel: url}`. */
function links(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of (header ?? '').split(', ')) {
    const match = /^<([^>]*)>; rel="(\w+)"$/.exec(entry);
    if (match) out[match[2]] = match[1];
  }
  return out;
}

describe('paging links', () => {
  const { app, api } = useTestApp();
  let token: string;
  let moduleId: number;
  let webhookId: number;
  beforeEach(async () => {
    ({ token } = await freshAdmin(app));
    const module = await makeModule(app.dataSource);
    moduleId = module.id;
    for (let i = 0; i < 5; i += 1) {
      const user = await makeUser(app.dataSource);
      await assignRole(app.dataSource, user.id, moduleId, i < 3 ? ModuleRole.Tutor : ModuleRole.Student);
      await makeModule(app.dataSource);
    }
    webhookId = (await makeWebhook(app.dataSource)).id;
  });

  it('links first, prev, next and last with absolute URLs, every parameter kept and the effective paging', async () => {
    const res = await api.get('/api/users?query=&sort=-created_at&page=2&per_page=2&unknown=a%20b', {
      token,
    });
    expect(res.status).toBe(200);
    expect(res.body.data.total).toBe(6);
    const base = `${app.url}/api/users?query=&sort=-created_at&unknown=a%20b`;
    expect(links(res.headers.get('link'))).toEqual({
      first: `${base}&page=1&per_page=2`,
      prev: `${base}&page=1&per_page=2`,
      next: `${base}&page=3&per_page=2`,
      last: `${base}&page=3&per_page=2`,
    });
  });

  it('states the clamped page and per_page, with no prev on page 1 and no next on the last page', async () => {
    const res = await api.get('/api/modules?page=-4&per_page=500', { token });
    expect(res.body.data).toMatchObject({ page: 1, per_page: 100, total: 6 });
    expect(links(res.headers.get('link'))).toEqual({
      first: `${app.url}/api/modules?page=1&per_page=100`,
      last: `${app.url}/api/modules?page=1&per_page=100`,
    });
  });

  it('is answered by every paged list', async () => {
    const lists = [
      '/api/modules',
      `/api/modules/${moduleId}/personnel`,
      `/api/modules/${moduleId}/personnel/eligible`,
      `/api/modules/${moduleId}/students`,
      '/api/users',
      '/api/audit',
      '/api/webhooks',
      `/api/webhooks/${webhookId}/deliveries`,
    ];
    for (const path of lists) {
      const res = await api.get(`${path}?per_page=1`, { token });
      expect(res.status).toBe(200);
      const last = Math.max(1, res.body.data.total as number);
      expect({ path, links: links(res.headers.get('link')) }).toEqual({
        path,
        links: {
          first: `${app.url}${path}?page=1&per_page=1`,
          ...(last > 1 ? { next: `${app.url}${path}?page=2&per_page=1` } : {}),
          last: `${app.url}${path}?page=${last}&per_page=1`,
        },
      });
    }
  });

  it('is not answered by a single read or a failed list', async () => {
    expect((await api.get(`/api/modules/${moduleId}`, { token })).headers.get('link')).toBeNull();
    const failed = await api.get('/api/modules?page=x', { token });
    expect(failed.status).toBe(400);
    expect(failed.headers.get('link')).toBeNull();
  });
});

describe('paging links with PUBLIC_BASE_URL', () => {
  const { app, api } = useTestApp({ publicBaseUrl: 'https://modules.uni.edu/admin' });

  it('start from PUBLIC_BASE_URL rather than the request host', async () => {
    const { token } = await freshAdmin(app);
    await makeUser(app.dataSource);
    const res = await api.get('/api/users?page=2&per_page=1', { token });
    expect(links(res.headers.get('link'))).toEqual({
      first: 'https://modules.uni.edu/admin/api/users?page=1&per_page=1',
      prev: 'https://modules.uni.edu/admin/api/users?page=1&per_page=1',
      last: 'https://modules.uni.edu/admin/api/users?page=2&per_page=1',
    });
  });
});

describe('idempotent retries', () => {
  const { app, api } = useTestApp();
  let token: string;
  beforeEach(async () => {
    ({ token } = await freshAdmin(app));
  });

  const createModule = (
    key: string | undefined,
    body: unknown = { code: 'IDM101', year: 2026, credits: 15 },
    as = token,
  ) =>
    api.post('/api/modules', {
      token: as,
      body,
      headers: key === undefined ? {} : { 'idempotency-key': key },
    });
  const counts = async () => {
    const [row] = await app.dataSource.query<{ modules: number; audit: number; events: number }[]>(
      `SELECT (SELECT count(*) FROM modules)::int AS modules, (SELECT count(*) FROM audit_events)::int AS audit,
              (SELECT count(*) FROM change_events)::int AS events`,
    );
    return row;
  };

  it('replays the first answer to a repeat, with Idempotent-Replayed, and does nothing twice', async () => {
    const first = await createModule('create-idem101');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const after = await counts();
    expect(after).toEqual({ modules: 1, audit: 1, events: 1 });
    // The same JSON value, written another way.
    const again = await createModule('create-idem101', { credits: 15, year: 2026, code: 'IDM101' });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);
    expect(again.body).toEqual(first.body);
    expect(await counts()).toEqual(after);
  });

  it('answers 422 to the same key with another request, changing nothing', async () => {
    expect((await createModule('k1')).status).toBe(201);
    const other = await createModule('k1', { code: 'OTH101', year: 2026, credits: 15 });
    expect(other.status).toBe(422);
    expect(other.body).toEqual(failure('Idempotency-Key was already used for another request'));
    const otherPath = await api.post('/api/modules?x=1', {
      token,
      body: { code: 'IDM101', year: 2026, credits: 15 },
      headers: { 'idempotency-key': 'k1' },
    });
    expect(otherPath.status).toBe(422);
    expect((await counts()).modules).toBe(1);
  });

  it('checks the key after authentication and the admin check, before the body', async () => {
    expect((await createModule('bad key', undefined, 'garbage')).status).toBe(401);
    const student = await makeUser(app.dataSource);
    expect((await createModule('bad key', undefined, tokenFor(student))).status).toBe(403);
    for (const bad of ['bad key', 'x'.repeat(256), 'caf\u00e9']) {
      const res = await createModule(bad, { code: 1 });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('Idempotency-Key must be 1-255 visible ASCII characters');
    }
    expect((await createModule('x'.repeat(255))).status).toBe(201);
  });

  it('remembers only a 2xx answer: after an error the key can be used again', async () => {
    const invalid = await createModule('retry-me', { code: '', year: 2026, credits: 15 });
    expect(invalid.status).toBe(400);
    const ok = await createModule('retry-me');
    expect(ok.status).toBe(201);
    expect(ok.headers.get('idempotent-replayed')).toBeNull();
    const clash = await createModule('clash');
    expect(clash.status).toBe(409);
    expect((await createModule('clash', { code: 'FRS101', year: 2026, credits: 15 })).status).toBe(201);
  });

  it('keeps keys per caller', async () => {
    const other = await makeUser(app.dataSource, { admin: true });
    expect((await createModule('shared')).status).toBe(201);
    const theirs = await createModule('shared', { code: 'THR101', year: 2026, credits: 15 }, tokenFor(other));
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect((await counts()).modules).toBe(2);
  });

  it('never replays a secret: a token comes back as null', async () => {
    const body = { name: 'lms', scopes: ['events'] };
    const headers = { 'idempotency-key': 'token-1' };
    // Tokens are not among the tables a reset empties: other files in this worker may have made some.
    const tokens = async () =>
      (await app.dataSource.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM integration_tokens`))[0].n;
    const before = await tokens();
    const first = await api.post('/api/tokens', { token, body, headers });
    expect(first.status).toBe(201);
    expect(first.body.data.token).toMatch(/^mas_/);
    const again = await api.post('/api/tokens', { token, body, headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ ...first.body, data: { ...first.body.data, token: null } });
    expect(await tokens()).toBe(before + 1);
  });

  it("never replays an import's generated passwords, and compares a CSV body by its bytes", async () => {
    const csv = 'username,email\nnew.person,new.person@uni.edu\n';
    const send = (text: string) =>
      api.post('/api/users/import', {
        token,
        body: text,
        headers: { 'content-type': 'text/csv', 'idempotency-key': 'import-1' },
      });
    const first = await send(csv);
    expect(first.status).toBe(201);
    expect(first.body.data.rows[0].password).toEqual(expect.any(String));
    const again = await send(csv);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.rows[0]).toEqual({ ...first.body.data.rows[0], password: null });
    expect((await send(csv.replace('new.person@', 'other@'))).status).toBe(422);
    const [{ n }] = await app.dataSource.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM users`);
    expect(n).toBe(2);
  });

  it('answers 409 while the first request with the key runs, and replays it once done', async () => {
    // Hold the first request's INSERT INTO modules with a table lock from a session of the test's own.
    const runner = app.dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    let first: ReturnType<typeof createModule> | undefined;
    try {
      await runner.query('LOCK TABLE modules IN SHARE MODE');
      first = createModule('slow');
      await waitFor(
        async () =>
          (
            await app.dataSource.query<unknown[]>(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          ).length > 0,
        { timeoutMs: 5000, what: "the first request's insert to wait on the lock" },
      );
      const during = await createModule('slow');
      expect(during.status).toBe(409);
      expect(during.body).toEqual(failure('A request with this Idempotency-Key is in progress'));
    } finally {
      await runner.commitTransaction();
      await runner.release();
    }
    expect((await first).status).toBe(201);
    const after = await createModule('slow');
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect(after.body).toEqual((await first).body);
    expect((await counts()).modules).toBe(1);
  });

  it('forgets a key after 24 hours: it is taken again, and the daily prune deletes it', async () => {
    expect((await createModule('old')).status).toBe(201);
    expect((await createModule('kept', { code: 'KPT101', year: 2026, credits: 15 })).status).toBe(201);
    await app.dataSource.query(
      `UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 minute' WHERE key = 'old'`,
    );
    const reused = await createModule('old', { code: 'NEW101', year: 2026, credits: 15 });
    expect(reused.status).toBe(201);
    expect(reused.headers.get('idempotent-replayed')).toBeNull();
    await app.dataSource.query(
      `UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'old'`,
    );
    expect(await app.service.app.get(IdempotencyPrune).prune()).toBe(1);
    const keys = await app.dataSource.query<{ key: string }[]>(`SELECT key FROM idempotency_keys`);
    expect(keys).toEqual([{ key: 'kept' }]);
  });

  it('leaves the login and requests without a key alone', async () => {
    const login = await api.post('/api/auth/login', {
      body: { username: 'nobody', password: 'x' },
      headers: { 'idempotency-key': 'bad key' },
    });
    expect(login.status).toBe(401);
    expect((await createModule(undefined)).status).toBe(201);
    expect((await createModule(undefined)).status).toBe(409);
  });
});

describe('idempotent retries across two instances', () => {
  const { app, api } = useTestApp();
  let second: TestApp;
  beforeAll(async () => {
    second = await startTestApp();
  });
  afterAll(() => second?.close());

  it('replays on the second instance what the first answered, and does nothing twice', async () => {
    const { token } = await freshAdmin(app);
    const body = { code: 'TWO101', year: 2026, credits: 15 };
    const headers = { 'idempotency-key': 'two-replicas' };
    const first = await api.post('/api/modules', { token, body, headers });
    expect(first.status).toBe(201);
    const retry = await client(second.url).post('/api/modules', { token, body, headers });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    const other = await client(second.url).post('/api/modules', {
      token,
      body: { ...body, code: 'TWP102' },
      headers,
    });
    expect(other.status).toBe(422);
    const [{ n }] = await app.dataSource.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM modules`);
    expect(n).toBe(1);
  });
});

describe('CORS for integrators', () => {
  const origin = 'https://lms.example.edu';
  const { app, api } = useTestApp({ corsOrigins: [origin] });

  it('allows If-Match, If-None-Match and Idempotency-Key, and exposes ETag, Link and Idempotent-Replayed', async () => {
    const preflight = await api.request('OPTIONS', '/api/modules', {
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,if-match,if-none-match,idempotency-key',
      },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toBe(
      'authorization,if-match,if-none-match,idempotency-key',
    );
    const { token } = await freshAdmin(app);
    const list = await api.get('/api/modules', { token, headers: { origin } });
    expect(list.headers.get('access-control-expose-headers')?.split(/, */)).toEqual(
      expect.arrayContaining(['ETag', 'Link', 'Idempotent-Replayed']),
    );
  });
});
