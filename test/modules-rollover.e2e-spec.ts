import { type DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import { useTestApp } from './support/app.js';
import {
  assignRole,
  makeModule,
  makeUser,
  type ModuleRow,
  tokenFor,
  type UserRow,
} from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';
import { failure, PERMISSION_DENIED } from './support/modules-fixtures.js';

const FROM = 2026;
const TO = 2027;

/** The role rows of every module, as `code/year user role`, sorted: what a rollover may change. */
async function roleRows(dataSource: DataSource): Promise<string[]> {
  const rows = await dataSource.query<{ row: string }[]>(
    `SELECT m.code || '/' || m.year || ' ' || r.user_id || ' ' || r.role AS row
     FROM user_module_roles r JOIN modules m ON m.id = r.module_id ORDER BY 1`,
  );
  return rows.map((r) => r.row);
}

/** Every table a rollover writes, with the module list's stats row, as one comparable value. */
async function snapshot(dataSource: DataSource) {
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
async function seedYear(dataSource: DataSource, count: number, year: number): Promise<number> {
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

describe('POST /api/modules/rollover', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let token: string;
  beforeEach(async () => {
    ({ admin, token } = await freshAdmin(app));
  });

  const rollover = (body: unknown, options: { dryRun?: boolean; query?: string; token?: string } = {}) =>
    api.post(`/api/modules/rollover${options.query ?? (options.dryRun ? '?dry_run=true' : '')}`, {
      token: options.token ?? token,
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

  it('creates each module in to_year with its description and credits, and copies its staff', async () => {
    const a = await staffed('ABC101');
    const b = await staffed('ABC100');
    const other = await makeModule(app.dataSource, { year: 2025 });
    const res = await rollover({ from_year: FROM, to_year: TO });
    expect(res.status).toBe(201);
    const [newA, newB] = [await moduleOf('ABC101', TO), await moduleOf('ABC100', TO)];
    expect(res.body).toEqual({
      success: true,
      data: {
        modules: [
          {
            code: 'ABC100',
            from_id: Number(b.module.id),
            to_id: Number(newB!.id),
            action: 'create',
            members_copied: 3,
          },
          {
            code: 'ABC101',
            from_id: Number(a.module.id),
            to_id: Number(newA!.id),
            action: 'create',
            members_copied: 3,
          },
        ],
        created: 2,
        existing: 0,
        missing: 0,
        members_copied: 6,
        dry_run: false,
      },
      message: 'Modules rolled over',
    });
    expect([newA!.description, newA!.credits]).toEqual([null, 20]);
    expect(await moduleOf(other.code, TO)).toBeUndefined();
    const read = await api.get(`/api/modules/${newA!.id}`, { token });
    expect(read.body.data.lecturers.map((u: UserRow) => u.id)).toEqual([Number(a.lecturer.id)]);
    expect(read.body.data.assistant_lecturers.map((u: UserRow) => u.id)).toEqual([Number(a.assistant.id)]);
    expect(read.body.data.tutors.map((u: UserRow) => u.id)).toEqual([Number(a.tutor.id)]);
    expect(read.body.data.students).toEqual([]);
    // The source year is untouched.
    expect((await roleRows(app.dataSource)).filter((row) => row.includes(`/${FROM} `))).toHaveLength(8);
  });

  it('writes one module.rollover audit event naming the created modules, with the years and counts', async () => {
    await staffed('ABC100');
    await staffed('ABC101');
    const res = await rollover({ from_year: FROM, to_year: TO, codes: ['ABC100', 'ABC101', 'ABC999'] });
    const created = res.body.data.modules.filter((row: { action: string }) => row.action === 'create');
    const audit = await api.get('/api/audit?action=module.rollover', { token });
    expect(audit.body.data.total).toBe(1);
    const [event] = audit.body.data.events;
    expect(event).toMatchObject({
      actor_id: Number(admin.id),
      action: 'module.rollover',
      target_type: 'module',
      summary: { from_year: FROM, to_year: TO, created: 2, existing: 0, missing: 1, members_copied: 6 },
    });
    expect([...event.target_ids].sort()).toEqual(created.map((row: { to_id: number }) => row.to_id).sort());
  });

  it('adds to an existing to_year module only the members it lacks; a member with another role keeps it', async () => {
    const { module, lecturer, assistant, tutor } = await staffed('ABC100');
    const existing = await makeModule(app.dataSource, {
      code: 'ABC100',
      year: TO,
      description: 'Kept as it is',
      credits: 5,
    });
    // The lecturer already teaches next year's module; the tutor is a Student there.
    await assignRole(app.dataSource, lecturer.id, existing.id, ModuleRole.Lecturer);
    await assignRole(app.dataSource, tutor.id, existing.id, ModuleRole.Student);
    const res = await rollover({ from_year: FROM, to_year: TO });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      modules: [
        {
          code: 'ABC100',
          from_id: Number(module.id),
          to_id: Number(existing.id),
          action: 'exists',
          members_copied: 1,
        },
      ],
      created: 0,
      existing: 1,
      missing: 0,
      members_copied: 1,
      dry_run: false,
    });
    const roles = await app.dataSource.query(
      `SELECT user_id::int AS id, role FROM user_module_roles WHERE module_id = $1 ORDER BY user_id`,
      [existing.id],
    );
    expect(roles).toEqual(
      [
        { id: Number(lecturer.id), role: 'Lecturer' },
        { id: Number(assistant.id), role: 'AssistantLecturer' },
        { id: Number(tutor.id), role: 'Student' },
      ].sort((x, y) => x.id - y.id),
    );
    const after = await moduleOf('ABC100', TO);
    expect([after!.description, after!.credits, after!.updated_at]).toEqual([
      'Kept as it is',
      5,
      existing.updated_at,
    ]);
  });

  it('rolls over only the codes named, with a missing row for each code with no module in from_year', async () => {
    const a = await staffed('ABC100');
    await staffed('ABC200');
    await makeModule(app.dataSource, { code: 'ZZZ001', year: TO });
    const res = await rollover({
      from_year: FROM,
      to_year: TO,
      codes: ['ZZZ001', 'ABC100', 'ABC100', 'AAA000'],
    });
    expect(res.status).toBe(201);
    const rows = res.body.data.modules;
    expect(rows.map((row: { code: string; action: string }) => [row.code, row.action])).toEqual([
      ['AAA000', 'missing'],
      ['ABC100', 'create'],
      ['ZZZ001', 'missing'],
    ]);
    expect(rows[0]).toEqual({
      code: 'AAA000',
      from_id: null,
      to_id: null,
      action: 'missing',
      members_copied: 0,
    });
    expect(rows[1].from_id).toBe(Number(a.module.id));
    expect(res.body.data).toMatchObject({ created: 1, existing: 0, missing: 2, members_copied: 3 });
    expect(await moduleOf('ABC200', TO)).toBeUndefined();
  });

  it('copies the roles asked for, in any spelling; an empty list creates the modules without members', async () => {
    const { student, tutor } = await staffed('ABC100');
    const res = await rollover({ from_year: FROM, to_year: TO, roles: ['student', 'TUTOR', 'Tutor'] });
    expect(res.body.data.members_copied).toBe(2);
    const created = await moduleOf('ABC100', TO);
    const roles = await app.dataSource.query(
      `SELECT user_id::int AS id, role FROM user_module_roles WHERE module_id = $1 ORDER BY role`,
      [created!.id],
    );
    expect(roles).toEqual([
      { id: Number(tutor.id), role: 'Tutor' },
      { id: Number(student.id), role: 'Student' },
    ]);

    await staffed('ABC200');
    const bare = await rollover({ from_year: FROM, to_year: TO, codes: ['ABC200'], roles: [] });
    expect(bare.body.data).toMatchObject({ created: 1, members_copied: 0 });
    const [{ n }] = await app.dataSource.query(
      `SELECT count(*)::int AS n FROM user_module_roles r JOIN modules m ON m.id = r.module_id
       WHERE m.code = 'ABC200' AND m.year = $1`,
      [TO],
    );
    expect(n).toBe(0);
  });

  it('copies only memberships effective active at the call, as active with no dates (§15)', async () => {
    const { module, lecturer, assistant, tutor, student } = await staffed('ABC100');
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const past = new Date(Date.now() - 86_400_000).toISOString();
    const later = new Date(Date.now() + 2 * 86_400_000).toISOString();
    // Lecturer: active with an open-ended window that started; assistant: completed; tutor: upcoming;
    // student: inactive.
    await app.dataSource.query(
      `UPDATE user_module_roles SET starts_at = $3, ends_at = $4 WHERE module_id = $1 AND user_id = $2`,
      [module.id, lecturer.id, past, later],
    );
    await app.dataSource.query(
      `UPDATE user_module_roles SET status = 'completed' WHERE module_id = $1 AND user_id = $2`,
      [module.id, assistant.id],
    );
    await app.dataSource.query(
      `UPDATE user_module_roles SET starts_at = $3 WHERE module_id = $1 AND user_id = $2`,
      [module.id, tutor.id, future],
    );
    await app.dataSource.query(
      `UPDATE user_module_roles SET status = 'inactive' WHERE module_id = $1 AND user_id = $2`,
      [module.id, student.id],
    );
    const body = {
      from_year: FROM,
      to_year: TO,
      roles: ['Lecturer', 'AssistantLecturer', 'Tutor', 'Student'],
    };
    const dry = await rollover(body, { dryRun: true });
    expect(dry.body.data.members_copied).toBe(1);
    const res = await rollover(body);
    expect(res.body.data.members_copied).toBe(1);
    const created = await moduleOf('ABC100', TO);
    const roles = await app.dataSource.query(
      `SELECT user_id::int AS id, role, status, starts_at, ends_at FROM user_module_roles WHERE module_id = $1`,
      [created!.id],
    );
    expect(roles).toEqual([
      { id: Number(lecturer.id), role: 'Lecturer', status: 'active', starts_at: null, ends_at: null },
    ]);
  });

  it('answers a dry run with 200 and what the run would do, changing nothing', async () => {
    await staffed('ABC100');
    const { lecturer } = await staffed('ABC200');
    const existing = await makeModule(app.dataSource, { code: 'ABC200', year: TO });
    await assignRole(app.dataSource, lecturer.id, existing.id, ModuleRole.Tutor);
    const body = { from_year: FROM, to_year: TO, codes: ['ABC100', 'ABC200', 'ABC300'] };
    const before = await snapshot(app.dataSource);
    const dry = await rollover(body, { dryRun: true });
    expect([dry.status, dry.body.message]).toEqual([200, 'Rollover checked']);
    expect(await snapshot(app.dataSource)).toEqual(before);
    expect(dry.body.data).toMatchObject({
      created: 1,
      existing: 1,
      missing: 1,
      members_copied: 5,
      dry_run: true,
    });
    expect(dry.body.data.modules.map((row: { to_id: number | null }) => row.to_id)).toEqual([
      null,
      Number(existing.id),
      null,
    ]);

    const applied = await rollover(body, { query: '?dry_run=false' });
    expect([applied.status, applied.body.message]).toEqual([201, 'Modules rolled over']);
    // The dry run foresaw exactly this, but for the id of the module it had yet to create.
    const strip = (data: { modules: { to_id: number | null }[] }) => ({
      ...data,
      dry_run: undefined,
      modules: data.modules.map((row) => ({ ...row, to_id: undefined })),
    });
    expect(strip(applied.body.data)).toEqual(strip(dry.body.data));
  });

  it('changes nothing when run again, and writes no second audit event', async () => {
    await staffed('ABC100');
    await staffed('ABC200');
    const body = {
      from_year: FROM,
      to_year: TO,
      roles: ['Lecturer', 'AssistantLecturer', 'Tutor', 'Student'],
    };
    const first = await rollover(body);
    expect(first.body.data).toMatchObject({ created: 2, members_copied: 8 });
    const before = await snapshot(app.dataSource);
    const again = await rollover(body);
    expect(again.status).toBe(201);
    expect(again.body.data).toMatchObject({ created: 0, existing: 2, missing: 0, members_copied: 0 });
    expect(again.body.data.modules.map((row: { to_id: number }) => row.to_id)).toEqual(
      first.body.data.modules.map((row: { to_id: number }) => row.to_id),
    );
    expect(await snapshot(app.dataSource)).toEqual(before);
    expect((await rollover(body, { dryRun: true })).body.data).toMatchObject({
      created: 0,
      members_copied: 0,
    });
  });

  it('writes module.created per new module and module.members_changed per module that got members', async () => {
    const a = await staffed('ABC100');
    const existing = await makeModule(app.dataSource, { year: TO, code: 'ABC200' });
    const b = await staffed('ABC200');
    await assignRole(app.dataSource, b.lecturer.id, existing.id, ModuleRole.Tutor);
    const empty = await makeModule(app.dataSource, { year: FROM, code: 'ABC300' });
    await app.dataSource.query('DELETE FROM change_events');
    const res = await rollover({ from_year: FROM, to_year: TO });
    expect(res.status).toBe(201);
    const events = await app.dataSource.query<{ type: string; data: any }[]>(
      `SELECT type, data FROM change_events ORDER BY txid, id`,
    );
    const newA = (await moduleOf('ABC100', TO))!;
    const newEmpty = (await moduleOf('ABC300', TO))!;
    const created = events.filter((event) => event.type === 'module.created').map((event) => event.data);
    expect(created.map((module) => module.code).sort()).toEqual(['ABC100', 'ABC300']);
    expect(created.find((module) => module.code === 'ABC100')).toMatchObject({
      id: Number(newA.id),
      year: TO,
      credits: 20,
      description: null,
    });
    expect(created.find((module) => module.code === 'ABC300').id).toBe(Number(newEmpty.id));
    const changed = events
      .filter((event) => event.type === 'module.members_changed')
      .map((event) => event.data);
    const byModule = new Map(changed.map((change) => [change.module_id, change]));
    expect(byModule.size).toBe(2);
    const sortById = <T extends { user_id: number }>(list: T[]) =>
      [...list].sort((x, y) => x.user_id - y.user_id);
    expect(sortById(byModule.get(Number(newA.id)).added)).toEqual(
      sortById([
        { user_id: a.lecturer.id, role: 'Lecturer' },
        { user_id: a.assistant.id, role: 'AssistantLecturer' },
        { user_id: a.tutor.id, role: 'Tutor' },
      ]),
    );
    // The existing module got the members it lacked; its Tutor (the source's Lecturer) kept the role.
    expect(byModule.get(Number(existing.id))).toEqual({
      module_id: Number(existing.id),
      added: sortById([
        { user_id: b.assistant.id, role: 'AssistantLecturer' },
        { user_id: b.tutor.id, role: 'Tutor' },
      ]),
      removed: [],
      changed: [],
    });
    expect(events).toHaveLength(4);
    expect(empty.id).toBeDefined();
    // A rerun and a dry run write none.
    await rollover({ from_year: FROM, to_year: TO });
    await rollover({ from_year: FROM, to_year: TO }, { dryRun: true });
    expect((await app.dataSource.query('SELECT count(*)::int AS n FROM change_events'))[0].n).toBe(4);
  });

  it('leaves nothing behind when a statement fails part-way', async () => {
    await staffed('ABC100');
    const { module } = await staffed('ABC200');
    // Refuses the copy of the second module's members, after the modules were created.
    await app.dataSource.query(`
      CREATE FUNCTION test_refuse_copy() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.module_id > ${Number(module.id)} AND NEW.user_id IN
           (SELECT user_id FROM user_module_roles WHERE module_id = ${Number(module.id)}) THEN
          RAISE EXCEPTION 'refused by test';
        END IF;
        RETURN NEW;
      END $$`);
    await app.dataSource.query(
      `CREATE TRIGGER test_refuse_copy BEFORE INSERT ON user_module_roles FOR EACH ROW EXECUTE FUNCTION test_refuse_copy()`,
    );
    const before = await snapshot(app.dataSource);
    try {
      const res = await rollover({ from_year: FROM, to_year: TO });
      expect([res.status, res.body]).toEqual([500, failure('An internal server error occurred')]);
    } finally {
      await app.dataSource.query(`DROP TRIGGER test_refuse_copy ON user_module_roles`);
      await app.dataSource.query(`DROP FUNCTION test_refuse_copy()`);
    }
    expect(await snapshot(app.dataSource)).toEqual(before);
    expect((await rollover({ from_year: FROM, to_year: TO })).body.data).toMatchObject({
      created: 2,
      members_copied: 6,
    });
  });

  it('skips a member whose user a concurrent transaction deletes, instead of failing', async () => {
    const { lecturer, tutor } = await staffed('ABC100');
    const deleting: QueryRunner = app.dataSource.createQueryRunner();
    await deleting.connect();
    try {
      await deleting.startTransaction();
      await deleting.query(`DELETE FROM users WHERE id = $1`, [tutor.id]);
      const pending = rollover({ from_year: FROM, to_year: TO });
      // The rollover reaches the deleted user's row lock and waits for the deleting transaction.
      await untilWaiting('WITH copied AS');
      await deleting.commitTransaction();
      const res = await pending;
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ created: 1, members_copied: 2 });
    } finally {
      if (deleting.isTransactionActive) await deleting.rollbackTransaction();
      await deleting.release();
    }
    const created = await moduleOf('ABC100', TO);
    const ids = await app.dataSource.query(
      `SELECT user_id::int AS id FROM user_module_roles WHERE module_id = $1 AND role = 'Lecturer'`,
      [created!.id],
    );
    expect(ids).toEqual([{ id: Number(lecturer.id) }]);
  });

  /** Waits until a statement starting with `prefix` waits for a lock held by another transaction. */
  async function untilWaiting(prefix: string): Promise<void> {
    for (;;) {
      const [{ waiting }] = await app.dataSource.query(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
        [`${prefix}%`],
      );
      if (waiting > 0) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  it('treats a namesake that another transaction creates meanwhile as existing', async () => {
    const { module } = await staffed('ABC100');
    const creating: QueryRunner = app.dataSource.createQueryRunner();
    await creating.connect();
    let namesake: number;
    try {
      await creating.startTransaction();
      [{ id: namesake }] = await creating.query(
        `INSERT INTO modules (code, year, credits) VALUES ('ABC100', $1, 1) RETURNING id::int AS id`,
        [TO],
      );
      const pending = rollover({ from_year: FROM, to_year: TO });
      await untilWaiting('INSERT INTO modules');
      await creating.commitTransaction();
      const res = await pending;
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        modules: [
          {
            code: 'ABC100',
            from_id: Number(module.id),
            to_id: namesake,
            action: 'exists',
            members_copied: 3,
          },
        ],
        created: 0,
        existing: 1,
        missing: 0,
        members_copied: 3,
        dry_run: false,
      });
    } finally {
      if (creating.isTransactionActive) await creating.rollbackTransaction();
      await creating.release();
    }
  });

  it('creates each module once and copies each member once when two rollovers of the same years overlap', async () => {
    await seedYear(app.dataSource, 40, FROM);
    const body = { from_year: FROM, to_year: TO };
    const answers = await Promise.all([rollover(body), rollover(body)]);
    expect(answers.map((res) => res.status)).toEqual([201, 201]);
    const [a, b] = answers.map((res) => res.body.data);
    expect([a.created + b.created, a.members_copied + b.members_copied]).toEqual([40, 120]);
    // Both name the same next-year modules, whichever of them created each.
    expect(a.modules.map((row: { to_id: number }) => row.to_id)).toEqual(
      b.modules.map((row: { to_id: number }) => row.to_id),
    );
    expect(a.modules.every((row: { to_id: number | null }) => row.to_id !== null)).toBe(true);
    const [{ n }] = await app.dataSource.query(
      `SELECT count(*)::int AS n FROM user_module_roles r JOIN modules m ON m.id = r.module_id WHERE m.year = $1`,
      [TO],
    );
    expect(n).toBe(120);
  });

  describe('refusals', () => {
    it('answers 400 with every broken rule, in field order, and changes nothing', async () => {
      await staffed('ABC100');
      const before = await snapshot(app.dataSource);
      const cases: [unknown, string][] = [
        [{ from_year: FROM, to_year: FROM }, 'to_year must differ from from_year'],
        [{ to_year: TO }, 'Year must be between 1900 and 9999'],
        [{ from_year: FROM }, 'Year must be between 1900 and 9999'],
        [{ from_year: '2026', to_year: 1899 }, 'Year must be between 1900 and 9999'],
        [{ from_year: FROM, to_year: 10000 }, 'Year must be between 1900 and 9999'],
        [{ from_year: FROM, to_year: 2027.5 }, 'Year must be between 1900 and 9999'],
        [{}, 'Year must be between 1900 and 9999'],
        [
          { from_year: FROM, to_year: TO, codes: ['ABC100', 'abc101'] },
          'codes must be an array of module codes in format ABC123',
        ],
        [
          { from_year: FROM, to_year: TO, codes: 'ABC100' },
          'codes must be an array of module codes in format ABC123',
        ],
        [
          { from_year: FROM, to_year: TO, codes: [1] },
          'codes must be an array of module codes in format ABC123',
        ],
        [{ from_year: FROM, to_year: TO, codes: [] }, 'codes must hold at least one module code'],
        [
          { from_year: FROM, to_year: TO, roles: ['Lecturer', 'Dean'] },
          'roles must be an array of roles: Lecturer, AssistantLecturer, Tutor, Student',
        ],
        [
          { from_year: FROM, to_year: TO, roles: 'Lecturer' },
          'roles must be an array of roles: Lecturer, AssistantLecturer, Tutor, Student',
        ],
        [{ from_year: FROM, to_year: TO, force: true }, 'property force should not exist'],
        [
          { extra: 1, roles: [null], codes: ['x'], to_year: FROM, from_year: FROM },
          'to_year must differ from from_year; codes must be an array of module codes in format ABC123; ' +
            'roles must be an array of roles: Lecturer, AssistantLecturer, Tutor, Student; property extra should not exist',
        ],
        [[FROM, TO], 'Request body must be a JSON object'],
        ['{"from_year": 2026,', 'Malformed JSON body'],
      ];
      for (const [body, message] of cases) {
        const res = await rollover(body);
        expect([body, res.status, res.body]).toEqual([body, 400, failure(message)]);
      }
      const query = await rollover({ from_year: FROM, to_year: TO }, { query: '?dry_run=yes' });
      expect([query.status, query.body]).toEqual([400, failure('dry_run must be true or false')]);
      expect(await snapshot(app.dataSource)).toEqual(before);
    });

    it('accepts null for codes and roles as their defaults', async () => {
      await staffed('ABC100');
      const res = await rollover({ from_year: FROM, to_year: TO, codes: null, roles: null });
      expect(res.body.data).toMatchObject({ created: 1, members_copied: 3 });
    });

    it('requires a token, then admin rights, before the body', async () => {
      await staffed('ABC100');
      const lecturer = await makeUser(app.dataSource);
      const [{ id }] = await app.dataSource.query(`SELECT id FROM modules WHERE code = 'ABC100'`);
      await assignRole(app.dataSource, lecturer.id, id, ModuleRole.Lecturer);
      const before = await snapshot(app.dataSource);
      const anonymous = await api.post('/api/modules/rollover', { body: { from_year: FROM, to_year: TO } });
      expect([anonymous.status, anonymous.body]).toEqual([401, failure('Authentication required')]);
      for (const body of [{ from_year: FROM, to_year: TO }, {}]) {
        const res = await rollover(body, { token: tokenFor(lecturer) });
        expect([res.status, res.body]).toEqual([403, failure(PERMISSION_DENIED)]);
      }
      expect(await snapshot(app.dataSource)).toEqual(before);
    });

    it('answers 413 for more than 10000 codes or more than 10000 modules of from_year, changing nothing', async () => {
      const codes = Array.from(
        { length: 10_001 },
        (_, i) => `A${String.fromCharCode(65 + Math.floor(i / 1000))}A${String(i % 1000).padStart(3, '0')}`,
      );
      expect(new Set(codes).size).toBe(10_001);
      const many = await rollover({ from_year: FROM, to_year: TO, codes });
      expect([many.status, many.body]).toEqual([413, failure('At most 10000 modules per rollover')]);
      // 10 000 codes are allowed (repeats count once).
      const allowed = await rollover({
        from_year: FROM,
        to_year: TO,
        codes: [...codes.slice(0, 10_000), codes[0]],
      });
      expect(allowed.status).toBe(201);
      expect(allowed.body.data.missing).toBe(10_000);

      await app.dataSource.query(
        `INSERT INTO modules (code, year, credits)
         SELECT 'Y' || chr(65 + g / 1000) || 'Z' || lpad((g % 1000)::text, 3, '0'), $1, 5 FROM generate_series(0, 10000) g`,
        [FROM],
      );
      const before = await snapshot(app.dataSource);
      for (const dryRun of [false, true]) {
        const res = await rollover({ from_year: FROM, to_year: TO }, { dryRun });
        expect([res.status, res.body]).toEqual([413, failure('At most 10000 modules per rollover')]);
      }
      expect(await snapshot(app.dataSource)).toEqual(before);
    });
  });

  describe('at scale', () => {
    /**
     * The statements the service sends during `work`, one list per query runner (a transaction, a repository
     * call); `ROLLOVER_TIMES=1` prints each one's time.
     */
    async function statementsDuring<T>(work: () => Promise<T>): Promise<[T, string[][]]> {
      const dataSource = app.dataSource;
      const original = dataSource.createQueryRunner.bind(dataSource);
      const runners: string[][] = [];
      dataSource.createQueryRunner = (mode?: 'master' | 'slave') => {
        const runner = original(mode);
        const query = runner.query.bind(runner);
        const statements: string[] = [];
        runners.push(statements);
        runner.query = (async (sql: string, ...rest: unknown[]) => {
          const started = performance.now();
          statements.push(sql.replace(/\s+/g, ' ').trim());
          try {
            return await (query as (...args: unknown[]) => Promise<unknown>)(sql, ...rest);
          } finally {
            if (process.env.ROLLOVER_TIMES)
              console.log(`${(performance.now() - started).toFixed(0)} ms ${sql.slice(0, 60)}`);
          }
        }) as QueryRunner['query'];
        return runner;
      };
      try {
        return [await work(), runners];
      } finally {
        dataSource.createQueryRunner = original;
      }
    }

    /** Long-running work: its transaction runs under the long statement bound (Transactions.runLong). */
    const LONG_BOUND = "SELECT set_config('statement_timeout', $1, true)";

    /**
     * The statements of the rollover's own transaction (the one under the long bound), as their first words.
     * Other runners of the same moment are left out: the guard's user check, and the webhook dispatcher, which
     * commits of earlier tests can wake at any time.
     */
    async function rolloverStatements(body: unknown, dryRun = false) {
      const [res, runners] = await statementsDuring(() => rollover(body, { dryRun }));
      const own = runners.filter((statements) => statements.includes(LONG_BOUND));
      expect(own).toHaveLength(1);
      return { res, statements: own[0].map((sql) => sql.split(/ (FROM|SELECT|WHERE|VALUES|\()/)[0]) };
    }

    const APPLIED = [
      'START TRANSACTION',
      LONG_BOUND,
      'SELECT m.id::text AS id, m.code',
      'SELECT id::text AS id, code',
      'INSERT INTO modules',
      // The members and the change events, made by PostgreSQL in one statement (docs/api.md §13).
      'WITH copied AS',
      // The audit event, written before the commit (writeRows).
      'WITH w0 AS',
      'COMMIT',
    ];
    const DRY_RUN = [
      'START TRANSACTION',
      LONG_BOUND,
      'SELECT m.id::text AS id, m.code',
      'SELECT id::text AS id, code',
      'SELECT p.from_id::text AS "fromId", count(*)::int AS n',
      'COMMIT',
    ];

    it('rolls 5 000 modules with 3 staff each over with the same few statements as 3 modules', async () => {
      await seedYear(app.dataSource, 3, FROM);
      const small = await rolloverStatements({ from_year: FROM, to_year: TO }, true);
      expect(small.statements).toEqual(DRY_RUN);
      const smallApplied = await rolloverStatements({ from_year: FROM, to_year: TO });
      expect(smallApplied.res.body.data).toMatchObject({ created: 3, members_copied: 9 });
      expect(smallApplied.statements).toEqual(APPLIED);

      await app.reset();
      ({ token } = await freshAdmin(app));
      const rows = await seedYear(app.dataSource, 5000, FROM);
      expect(rows).toBe(20_000);
      let started = performance.now();
      const dry = await rolloverStatements({ from_year: FROM, to_year: TO }, true);
      const dryMs = performance.now() - started;
      expect(dry.statements).toEqual(DRY_RUN);
      expect(dry.res.body.data).toMatchObject({ created: 5000, members_copied: 15_000 });

      started = performance.now();
      const applied = await rolloverStatements({ from_year: FROM, to_year: TO });
      const appliedMs = performance.now() - started;
      expect(applied.res.status).toBe(201);
      expect(applied.res.body.data).toMatchObject({ created: 5000, existing: 0, members_copied: 15_000 });
      expect(applied.res.body.data.modules).toHaveLength(5000);
      expect(applied.statements).toEqual(APPLIED);
      const [{ n }] = await app.dataSource.query(
        `SELECT count(*)::int AS n FROM user_module_roles r JOIN modules m ON m.id = r.module_id WHERE m.year = $1`,
        [TO],
      );
      expect(n).toBe(15_000);

      started = performance.now();
      const again = await rolloverStatements({ from_year: FROM, to_year: TO });
      const againMs = performance.now() - started;
      expect(again.res.body.data).toMatchObject({ created: 0, existing: 5000, members_copied: 0 });
      // Nothing to create and nothing copied: no module insert, no audit event, no change event.
      expect(again.statements).toEqual(
        APPLIED.filter((sql) => sql !== 'INSERT INTO modules' && sql !== 'WITH w0 AS'),
      );
      console.log(
        `rollover of 5000 modules with 3 staff each: dry run ${dryMs.toFixed(0)} ms, applied ` +
          `${appliedMs.toFixed(0)} ms, again ${againMs.toFixed(0)} ms; ${applied.statements.length} statements`,
      );
    });
  });
});
