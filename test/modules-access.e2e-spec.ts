import { startTestApp, type TestApp } from './support/app.js';
import { makeModule, makeUser, tokenFor } from './support/factories.js';
import { client, type Client } from './support/http.js';
import { failure, PERMISSION_DENIED } from './support/modules-fixtures.js';

interface Route {
  method: string;
  path: string;
  adminOnly: boolean;
  /** A body that would be valid, so only access decides the answer. */
  body?: unknown;
}

/** Every route of docs/api.md §4. */
const ROUTES: Route[] = [
  { method: 'GET', path: '/api/modules', adminOnly: false },
  { method: 'GET', path: '/api/modules/me', adminOnly: false },
  { method: 'GET', path: '/api/modules/:id', adminOnly: false },
  { method: 'POST', path: '/api/modules', adminOnly: true, body: { code: 'ABC123', year: 2026, credits: 5 } },
  {
    method: 'PUT',
    path: '/api/modules/:id',
    adminOnly: true,
    body: { code: 'ABC123', year: 2026, credits: 5 },
  },
  { method: 'DELETE', path: '/api/modules/:id', adminOnly: true },
  { method: 'DELETE', path: '/api/modules/bulk', adminOnly: true, body: { module_ids: [1] } },
  {
    method: 'POST',
    path: '/api/modules/rollover',
    adminOnly: true,
    body: { from_year: 2026, to_year: 2027 },
  },
  { method: 'GET', path: '/api/modules/:id/personnel', adminOnly: false },
  { method: 'GET', path: '/api/modules/:id/personnel/eligible', adminOnly: false },
  {
    method: 'POST',
    path: '/api/modules/:id/personnel',
    adminOnly: false,
    body: { user_ids: [1], role: 'Tutor' },
  },
  {
    method: 'DELETE',
    path: '/api/modules/:id/personnel',
    adminOnly: false,
    body: { user_ids: [1], role: 'Tutor' },
  },
  { method: 'GET', path: '/api/modules/:id/students', adminOnly: false },
  { method: 'POST', path: '/api/modules/:id/students', adminOnly: false, body: { user_ids: [1] } },
  { method: 'DELETE', path: '/api/modules/:id/students', adminOnly: false, body: { user_ids: [1] } },
];

describe('modules routes access', () => {
  let app: TestApp;
  let api: Client;
  let moduleId: number;
  let userToken: string;

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.url);
    await app.reset();
    moduleId = (await makeModule(app.dataSource)).id;
    userToken = tokenFor(await makeUser(app.dataSource));
  });
  afterAll(() => app.close());

  const send = (route: Route, token?: string) =>
    api.request(route.method, route.path.replace(':id', String(moduleId)), { token, body: route.body });

  it.each(ROUTES)('$method $path requires a token', async (route) => {
    const res = await send(route);
    expect([res.status, res.body]).toEqual([401, failure('Authentication required')]);
  });

  it.each(ROUTES.filter((route) => route.adminOnly))(
    '$method $path refuses a non-admin with 403',
    async (route) => {
      const res = await send(route, userToken);
      expect([res.status, res.body]).toEqual([403, failure(PERMISSION_DENIED)]);
    },
  );

  it.each(ROUTES.filter((route) => !route.adminOnly && route.path.includes(':id')))(
    '$method $path refuses a user without a role in the module with 403',
    async (route) => {
      const res = await send(route, userToken);
      expect([res.status, res.body]).toEqual([403, failure(PERMISSION_DENIED)]);
    },
  );

  it('answers a method the routes do not serve with 404', async () => {
    const res = await api.request('PATCH', `/api/modules/${moduleId}`, { token: userToken, body: {} });
    expect([res.status, res.body]).toEqual([404, failure('Route not found')]);
  });
});
