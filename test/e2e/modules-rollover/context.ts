// What the parts of test/modules-rollover.e2e-spec.ts share: the years, snapshots of what a rollover writes, a
// year seeded in bulk, and an administrator with helpers that call the route.
import { type DataSource, type EntityManager } from 'typeorm';
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { type UsedTestApp } from '../../support/app.js';
import { assignRole, makeModule, makeUser, type ModuleRow, type UserRow } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';

export const FROM = 2026;
export const TO = 2027;

/** The role rows of every module, as `code/year user role`, sorted: what a rollover may change. */
export async function roleRows(dataSource: DataSource): Promise<string[]> {
  const rows = await dataSource.query<{ row: string }[]>(
    `SELECT m.code || '/' || m.year || ' ' || r.user_id || ' ' || r.role AS row
     FROM user_module_roles r JOIN modules m ON m.id = r.module_id ORDER BY 1`,
  );
  return rows.map((r) => r.row);
}

/** Every table a rollover writes, with the module list's stats row, as one comparable value. */
export async function snapshot(dataSource: DataSource) {
  const [counts] = await dataSource.query(
    `SELECT (SELECT json_agg(m ORDER BY id) FROM modules m) AS modules,
            (SELECT count(*)::int FROM audit_events) AS events,
            (SELECT count(*)::int FROM change_events) AS change_events,
            (SELECT row_to_json(s) FROM module_stats s) AS stats`,
  );
  return { ...counts, roles: await roleRows(dataSource) };
}

/**
 * `count` modules of `year` (codes `XAZ000`…) in one statement, each with a Lecturer, an AssistantLecturer and a
 * Tutor from a pool of 300 staff, and one Student; returns the number of role rows made.
 */
export async function seedYear(dataSource: DataSource, count: number, year: number): Promise<number> {
  // The harness's work, not the service's: without the service's statement timeout (5 s), which 20 000 role
  // rows with their row trigger can outlast on a machine busy with other Jest workers.
  return dataSource.transaction(async (manager) => {
    await manager.query(`SET LOCAL statement_timeout = 0`);
    return seedYearIn(manager, count, year);
  });
}

async function seedYearIn(dataSource: EntityManager, count: number, year: number): Promise<number> {
  await dataSource.query(
    `INSERT INTO users (username, email, password_hash)
     SELECT 'staff' || k, 'staff' || k || '@example.edu', 'not-a-hash' FROM generate_series(0, 300) k
     ON CONFLICT DO NOTHING`,
  );
  await dataSource.query(
    `INSERT INTO modules (code, year, description, credits)
     SELECT 'X' || chr(65 + g / 1000) || 'Z' || lpad((g % 1000)::text, 3, '0'), $2, 'Module ' || g, 5 + g % 20
     FROM generate_series(0, $1::int - 1) g`,
    [count, year],
  );
  // Statistics of what the suite's earlier tests left (dead rows, an empty table) must not plan this join.
  await dataSource.query(`ANALYZE users, modules`);
  await dataSource.query(
    `INSERT INTO user_module_roles (user_id, module_id, role)
     SELECT u.id, m.id, s.role::module_role
     FROM modules m
     CROSS JOIN LATERAL (VALUES ('Lecturer', m.id % 100), ('AssistantLecturer', 100 + m.id % 100),
                                ('Tutor', 200 + m.id % 100), ('Student', 300)) s(role, k)
     JOIN users u ON u.username = 'staff' || s.k
     WHERE m.year = $1`,
    [year],
  );
  const [{ n }] = await dataSource.query<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM user_module_roles r JOIN modules m ON m.id = r.module_id WHERE m.year = $1`,
    [year],
  );
  return n;
}

/**
 * The area's service with an administrator made afresh before each test (in `given`), and the helpers its
 * parts share.
 */
export function useRollover({ app, api }: UsedTestApp) {
  const given = {} as { admin: UserRow; token: string };
  beforeEach(async () => {
    ({ admin: given.admin, token: given.token } = await freshAdmin(app));
  });

  const rollover = (body: unknown, options: { dryRun?: boolean; query?: string; token?: string } = {}) =>
    api.post(`/api/modules/rollover${options.query ?? (options.dryRun ? '?dry_run=true' : '')}`, {
      token: options.token ?? given.token,
      body,
    });

  /** A module of FROM with one user in each role, and the users. */
  async function staffed(code?: string) {
    const module = await makeModule(app.dataSource, { year: FROM, code, credits: 20, description: null });
    const people = {
      lecturer: await makeUser(app.dataSource),
      assistant: await makeUser(app.dataSource),
      tutor: await makeUser(app.dataSource),
      student: await makeUser(app.dataSource),
    };
    await assignRole(app.dataSource, people.lecturer.id, module.id, ModuleRole.Lecturer);
    await assignRole(app.dataSource, people.assistant.id, module.id, ModuleRole.AssistantLecturer);
    await assignRole(app.dataSource, people.tutor.id, module.id, ModuleRole.Tutor);
    await assignRole(app.dataSource, people.student.id, module.id, ModuleRole.Student);
    return { module, ...people };
  }

  const moduleOf = async (code: string, year: number): Promise<ModuleRow | undefined> =>
    (
      await app.dataSource.query<ModuleRow[]>(`SELECT * FROM modules WHERE code = $1 AND year = $2`, [
        code,
        year,
      ])
    )[0];

  return { app, api, given, rollover, staffed, moduleOf };
}

export type RolloverContext = ReturnType<typeof useRollover>;
