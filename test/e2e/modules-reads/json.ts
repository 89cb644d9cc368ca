// Part of test/modules-reads.e2e-spec.ts: module JSON built by PostgreSQL.
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { type UsedTestApp } from '../../support/app.js';
import { assignRole, makeModule, makeUser, type ModuleRow, tokenFor } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { moduleJson } from '../../support/modules-fixtures.js';

/**
 * The module list and `GET /api/modules/me` write Modules as JSON text built by PostgreSQL: the bytes must be
 * exactly what `JSON.stringify` writes for the same values, whatever the characters.
 */
export function moduleJsonTests({ app }: UsedTestApp): void {
  const odd = [
    'quote"back\\slash',
    'tab\tline\nfeed\r\u0001\u001f\u007f ctl',
    'accent-\u00e9-\u2028-\u2029-\u{1f600} </script>',
    null,
  ];

  async function text(path: string, token: string): Promise<string> {
    const response = await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    return response.text();
  }

  it('lists and groups modules byte for byte as JSON.stringify would', async () => {
    const { token: adminToken } = await freshAdmin(app);
    await app.dataSource.query('DELETE FROM modules');
    const member = await makeUser(app.dataSource);
    const roles = [ModuleRole.Student, ModuleRole.Lecturer, ModuleRole.Student, ModuleRole.Tutor];
    const modules: ModuleRow[] = [];
    for (const [i, description] of odd.entries()) {
      const module = await makeModule(app.dataSource, { code: `JSN10${i}`, year: 2020 + i, description });
      await assignRole(app.dataSource, member.id, module.id, roles[i]);
      modules.push(module);
    }
    const other = await makeModule(app.dataSource, { code: 'JSN200', year: 2030, description: 'not mine' });

    const byCode = (list: ModuleRow[]) => [...list].sort((a, b) => a.code.localeCompare(b.code));
    const listBody = (list: ModuleRow[]) =>
      JSON.stringify({
        success: true,
        data: { modules: byCode(list).map(moduleJson), page: 1, per_page: 20, total: list.length },
        message: 'Modules retrieved successfully',
      });
    expect(await text('/api/modules', adminToken)).toBe(listBody([...modules, other]));
    expect(await text('/api/modules?query=JSN', adminToken)).toBe(listBody([...modules, other]));
    expect(await text('/api/modules', tokenFor(member))).toBe(listBody(modules));

    // Each group: year descending, then code.
    const group = (role: ModuleRole) =>
      modules
        .filter((_, i) => roles[i] === role)
        .sort((a, b) => b.year - a.year)
        .map(moduleJson);
    expect(await text('/api/modules/me', tokenFor(member))).toBe(
      JSON.stringify({
        success: true,
        data: {
          as_student: group(ModuleRole.Student),
          as_tutor: group(ModuleRole.Tutor),
          as_lecturer: group(ModuleRole.Lecturer),
          as_assistant_lecturer: group(ModuleRole.AssistantLecturer),
        },
        message: 'My module details retrieved successfully',
      }),
    );
  });

  it('writes an empty page past the end and an empty /me as JSON.stringify would', async () => {
    const { token: adminToken } = await freshAdmin(app);
    const loner = await makeUser(app.dataSource);
    const [{ n }] = await app.dataSource.query<{ n: string }[]>('SELECT count(*) AS n FROM modules');
    expect(await text('/api/modules?page=9999', adminToken)).toBe(
      JSON.stringify({
        success: true,
        data: { modules: [], page: 9999, per_page: 20, total: Number(n) },
        message: 'Modules retrieved successfully',
      }),
    );
    expect(await text('/api/modules/me', tokenFor(loner))).toBe(
      JSON.stringify({
        success: true,
        data: { as_student: [], as_tutor: [], as_lecturer: [], as_assistant_lecturer: [] },
        message: 'My module details retrieved successfully',
      }),
    );
  });
}
