// What the parts of test/modules-lifecycle.e2e-spec.ts's lifecycle tests share: a module and an administrator made
// afresh before each test, and memberships written and read straight in the database.
import { type UsedTestApp } from '../../support/app.js';
import { makeModule, makeUser, type ModuleRow, type UserRow } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';

const DAY = 86_400_000;
export const past = (days = 1) => new Date(Date.now() - days * DAY).toISOString();
export const future = (days = 1) => new Date(Date.now() + days * DAY).toISOString();

export interface Lifecycle {
  status?: 'active' | 'inactive' | 'completed';
  starts_at?: string | null;
  ends_at?: string | null;
}

/**
 * The area's service with an administrator and a module made afresh before each test (in `given`), and the
 * helpers its parts share.
 */
export function useLifecycleModule({ app, api }: UsedTestApp) {
  const given = {} as { adminToken: string; module: ModuleRow };
  beforeEach(async () => {
    ({ token: given.adminToken } = await freshAdmin(app));
    given.module = await makeModule(app.dataSource);
  });

  /** A role row written straight into the database, with its lifecycle. */
  async function member(user: UserRow, role: string, lifecycle: Lifecycle = {}, moduleId = given.module.id) {
    await app.dataSource.query(
      `INSERT INTO user_module_roles (user_id, module_id, role, status, starts_at, ends_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        user.id,
        moduleId,
        role,
        lifecycle.status ?? 'active',
        lifecycle.starts_at ?? null,
        lifecycle.ends_at ?? null,
      ],
    );
  }

  /** The stored membership of `user` in the module (dates as RFC 3339 text), or undefined. */
  async function stored(user: UserRow, moduleId = given.module.id) {
    const [row] = await app.dataSource.query(
      `SELECT role, status::text AS status,
              to_char(starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS starts_at,
              to_char(ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ends_at
       FROM user_module_roles WHERE user_id = $1 AND module_id = $2`,
      [user.id, moduleId],
    );
    return row as
      { role: string; status: string; starts_at: string | null; ends_at: string | null } | undefined;
  }

  /** The `module.members_changed` events written so far, oldest first (their data). */
  async function membersEvents() {
    const rows = await app.dataSource.query<{ data: unknown }[]>(
      `SELECT data FROM change_events WHERE type = 'module.members_changed' ORDER BY id`,
    );
    return rows.map((row) => row.data);
  }

  /** One user per effective status, each a Student of the module. */
  async function studentsOfEachStatus() {
    const active = await makeUser(app.dataSource, { username: 'a-active' });
    const upcoming = await makeUser(app.dataSource, { username: 'b-upcoming' });
    const ended = await makeUser(app.dataSource, { username: 'c-ended' });
    const completed = await makeUser(app.dataSource, { username: 'd-completed' });
    const inactive = await makeUser(app.dataSource, { username: 'e-inactive' });
    const window = { starts_at: past(10), ends_at: future(10) };
    await member(active, 'Student', window);
    await member(upcoming, 'Student', { starts_at: future(2) });
    await member(ended, 'Student', { starts_at: past(10), ends_at: past(1) });
    await member(completed, 'Student', { status: 'completed' });
    await member(inactive, 'Student', { status: 'inactive', ends_at: future(3) });
    return { active, upcoming, ended, completed, inactive, window };
  }

  return { app, api, given, member, stored, membersEvents, studentsOfEachStatus };
}

export type LifecycleContext = ReturnType<typeof useLifecycleModule>;
