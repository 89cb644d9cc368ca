// Part of test/modules-reads.e2e-spec.ts: the module list, and who sees which modules.
import {
  assignRole,
  failure,
  ids,
  makeModule,
  makeUser,
  moduleJson,
  ModuleRole,
  type ModuleRow,
  tokenFor,
  type UserRow,
} from '../../support/modules-fixtures.js';
import { type ModuleListContext } from './context.js';

export function listTests(ctx: ModuleListContext): void {
  const { app, api, list, given } = ctx;

  it('requires a token', async () => {
    const res = await api.get('/api/modules');
    expect(res.status).toBe(401);
    expect(res.body).toEqual(failure('Authentication required'));
    expect((await api.get('/api/modules', { token: 'garbage' })).body).toEqual(
      failure('Invalid or expired token'),
    );
  });

  it('gives an admin every module in id order with page, per_page and total', async () => {
    const rows = [
      await makeModule(app.dataSource, { code: 'ZZZ999', year: 2024 }),
      await makeModule(app.dataSource, { code: 'AAA111', year: 2026, description: null }),
      await makeModule(app.dataSource, { code: 'MMM555', year: 2025, credits: 30 }),
    ];
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { modules: rows.map(moduleJson), page: 1, per_page: 20, total: 3 },
      message: 'Modules retrieved successfully',
    });
  });

  it('answers an empty list when there are no modules', async () => {
    expect((await list()).body.data).toEqual({ modules: [], page: 1, per_page: 20, total: 0 });
  });

  describe('visibility', () => {
    let user: UserRow;
    let token: string;
    let mine: ModuleRow[];

    beforeEach(async () => {
      user = await makeUser(app.dataSource);
      token = tokenFor(user);
      const other = await makeUser(app.dataSource);
      mine = [];
      for (const role of [
        ModuleRole.Lecturer,
        ModuleRole.AssistantLecturer,
        ModuleRole.Tutor,
        ModuleRole.Student,
      ]) {
        const module = await makeModule(app.dataSource);
        await assignRole(app.dataSource, user.id, module.id, role);
        mine.push(module);
        // Another user's role in a module of this user's does not duplicate it.
        await assignRole(app.dataSource, other.id, module.id, ModuleRole.Student);
      }
      const notMine = await makeModule(app.dataSource);
      await assignRole(app.dataSource, other.id, notMine.id, ModuleRole.Lecturer);
      await makeModule(app.dataSource);
    });

    it('shows a non-admin exactly the modules where they hold any role', async () => {
      const res = await list('', token);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ modules: mine.map(moduleJson), page: 1, per_page: 20, total: 4 });
    });

    it('counts only visible modules in total across pages', async () => {
      const res = await list('?per_page=3&page=2', token);
      expect(res.body.data).toEqual({ modules: [moduleJson(mine[3])], page: 2, per_page: 3, total: 4 });
    });

    it('applies filters within the visible modules only', async () => {
      const res = await list(`?code=${mine[1].code.toLowerCase()}`, token);
      expect(ids(res.body.data.modules)).toEqual([Number(mine[1].id)]);
      expect(res.body.data.total).toBe(1);
    });

    it('shows an admin every module whether or not they hold roles', async () => {
      await assignRole(app.dataSource, given.admin.id, mine[0].id, ModuleRole.Student);
      expect((await list()).body.data.total).toBe(6);
    });

    it('treats a token claiming admin for a user without the admin flag as a non-admin', async () => {
      const res = await list('', tokenFor({ id: user.id, admin: true }));
      expect(res.body.data).toEqual({ modules: mine.map(moduleJson), page: 1, per_page: 20, total: 4 });
    });

    it('answers a non-admin without any role an empty page with the paging in effect', async () => {
      const loner = await makeUser(app.dataSource);
      const res = await list('?page=3&per_page=7', tokenFor(loner));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: { modules: [], page: 3, per_page: 7, total: 0 },
        message: 'Modules retrieved successfully',
      });
    });
  });
}
