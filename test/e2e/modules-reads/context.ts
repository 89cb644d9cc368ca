// What the parts of test/modules-reads.e2e-spec.ts's list tests share: an administrator made afresh before each
// test, and helpers that call the list.
import { type UsedTestApp } from '../../support/app.js';
import { type UserRow } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { ids } from '../../support/modules-fixtures.js';

/**
 * The area's service with an administrator made afresh before each test (in `given`), and helpers that call
 * `GET /api/modules`.
 */
export function useModuleList({ app, api }: UsedTestApp) {
  const given = {} as { admin: UserRow; adminToken: string };
  beforeEach(async () => {
    ({ admin: given.admin, token: given.adminToken } = await freshAdmin(app));
  });

  const list = (query = '', token = given.adminToken) => api.get(`/api/modules${query}`, { token });
  const listIds = async (query: string, token = given.adminToken) => {
    const res = await list(query, token);
    expect(res.status).toBe(200);
    return ids(res.body.data.modules);
  };

  return { app, api, given, list, listIds };
}

export type ModuleListContext = ReturnType<typeof useModuleList>;
