// Part of test/modules-rollover.e2e-spec.ts: dry runs, runs again, the events written, failures and concurrent runs.
import { type QueryRunner } from 'typeorm';
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { assignRole, makeModule } from '../../support/factories.js';
import { failure } from '../../support/modules-fixtures.js';
import { FROM, type RolloverContext, seedYear, snapshot, TO } from './context.js';

export function rolloverRuns(ctx: RolloverContext): void {
  const { app, rollover, staffed, moduleOf } = ctx;

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
}
