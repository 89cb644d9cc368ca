// What the parts of test/exports.e2e-spec.ts share: the service's settings, a year of modules and members, and
// helpers that download and read an export.
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { type UsedTestApp } from '../../support/app.js';
import { assignRole, makeModule, makeUser, tokenFor, type UserRow } from '../../support/factories.js';
import { download, readExport, type ZipCsv } from '../../support/lms-zip.js';

/**
 * The LMS roster exports (docs/api.md §16), read the way the platforms read them: the zip by yauzl, each CSV by
 * csv-parse with no relaxation. The service runs with a year starting on 1 September and a Canvas sub-account.
 */
export const SETTINGS = {
  lmsExport: {
    idPrefix: 'mas-',
    orgName: 'Test University',
    yearStart: { month: 9, day: 1 },
    canvasAccountId: 'sub-7',
  },
};
export const ONEROSTER = '/api/exports/oneroster-1.1.zip';
export const CANVAS = '/api/exports/canvas-sis.zip';
export const DAY = /^\d{4}-\d{2}-\d{2}$/;
export const INSTANT_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The year 2026 with every kind of member; 2025 has a module that must not show up. */
export interface RosterYear {
  intro: { id: number };
  plain: { id: number };
  odd: { id: number };
  lecturer: UserRow;
  assistant: UserRow;
  tutor: UserRow;
  student: UserRow;
  suspended: UserRow;
  upcoming: UserRow;
  concluded: UserRow;
  ended: UserRow;
  dropped: UserRow;
}

/**
 * The area's service with an administrator and the year 2026 made afresh before each test (in `given`), and the
 * helpers its parts share.
 */
export function useRosterYear({ app, api }: UsedTestApp) {
  const given = {} as { admin: UserRow; adminToken: string; year: RosterYear };
  const ds = () => app.dataSource;

  /** A user with the §14 fields set straight in the database. */
  async function person(fields: Record<string, unknown> = {}): Promise<UserRow> {
    const user = await makeUser(ds());
    const names = Object.keys(fields);
    if (names.length > 0)
      await ds().query(
        `UPDATE users SET ${names.map((name, i) => `${name} = $${i + 2}`).join(', ')} WHERE id = $1`,
        [user.id, ...Object.values(fields)],
      );
    return user;
  }

  async function member(user: UserRow, moduleId: number, role: ModuleRole, lifecycle = '') {
    await assignRole(ds(), user.id, moduleId, role);
    if (lifecycle)
      await ds().query(`UPDATE user_module_roles SET ${lifecycle} WHERE user_id = $1 AND module_id = $2`, [
        user.id,
        moduleId,
      ]);
  }

  const get = (path: string, token = given.adminToken) => download(`${app.url}${path}`, token);

  async function exported(path: string, token = given.adminToken): Promise<Map<string, ZipCsv>> {
    const answer = await get(path, token);
    expect(answer.status).toBe(200);
    return readExport(answer.body);
  }

  beforeEach(async () => {
    await app.reset();
    given.admin = await makeUser(ds(), { admin: true });
    given.adminToken = tokenFor(given.admin);
    const intro = await makeModule(ds(), {
      code: 'CSC101',
      year: 2026,
      description: 'Intro\r\nto "CS", part 1',
    });
    const plain = await makeModule(ds(), { code: 'CSC102', year: 2026, description: null });
    const odd = await makeModule(ds(), { code: 'MA_1 ü', year: 2026, description: '' });
    const other = await makeModule(ds(), { code: 'OLD100', year: 2025 });
    const lecturer = await person({ given_name: 'Grace', family_name: 'Hopper', external_id: 'gh-1' });
    const assistant = await person({ display_name: 'Ada Lovelace King', external_id: 'ada@uni.edu' });
    const tutor = await person({ display_name: 'Plato', external_id: 'p.2' });
    const student = await person({ external_id: 'S-0001' });
    const suspended = await person({
      active: false,
      given_name: 'Sus',
      family_name: 'Pended',
      external_id: 'S-2',
    });
    const upcoming = await person({ external_id: 'S-3' });
    const concluded = await person({ external_id: 'S-4' });
    const ended = await person({ external_id: 'S-5' });
    const dropped = await person({ external_id: 'S-6' });
    await member(lecturer, intro.id, ModuleRole.Lecturer, `starts_at = '2025-09-14T08:00:00.250Z'`);
    await member(lecturer, plain.id, ModuleRole.Lecturer);
    await member(assistant, intro.id, ModuleRole.AssistantLecturer);
    await member(tutor, intro.id, ModuleRole.Tutor);
    await member(tutor, plain.id, ModuleRole.Student);
    await member(student, intro.id, ModuleRole.Student);
    await member(suspended, intro.id, ModuleRole.Student);
    await member(upcoming, intro.id, ModuleRole.Student, `starts_at = now() + interval '30 days'`);
    await member(concluded, intro.id, ModuleRole.Student, `status = 'completed'`);
    await member(
      ended,
      intro.id,
      ModuleRole.Student,
      `starts_at = now() - interval '60 days', ends_at = now() - interval '1 day'`,
    );
    await member(dropped, intro.id, ModuleRole.Student, `status = 'inactive'`);
    await member(student, other.id, ModuleRole.Student);
    given.year = {
      intro,
      plain,
      odd,
      lecturer,
      assistant,
      tutor,
      student,
      suspended,
      upcoming,
      concluded,
      ended,
      dropped,
    };
  });

  const byId = (file: ZipCsv, column: string) => new Map(file.rows.map((row) => [row[column], row]));

  return { app, api, given, ds, person, member, get, exported, byId };
}

export type ExportsContext = ReturnType<typeof useRosterYear>;
