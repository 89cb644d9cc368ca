// HTTP conventions for integrators (docs/api.md §17): paging links, validators, preconditions, idempotent retries.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import { ModuleRole } from '../src/course-modules/membership/module-role.js';
import { useTestApp } from './support/app.js';
import { assignRole, makeModule, makeUser } from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';
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
