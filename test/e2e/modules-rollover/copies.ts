// Part of test/modules-rollover.e2e-spec.ts: what a rollover creates and copies.
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { assignRole, makeModule, type UserRow } from '../../support/factories.js';
import { FROM, roleRows, type RolloverContext, TO } from './context.js';

export function rolloverCopies(ctx: RolloverContext): void {
  const { app, api, rollover, staffed, moduleOf, given } = ctx;

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
    const read = await api.get(`/api/modules/${newA!.id}`, { token: given.token });
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
    const audit = await api.get('/api/audit?action=module.rollover', { token: given.token });
    expect(audit.body.data.total).toBe(1);
    const [event] = audit.body.data.events;
    expect(event).toMatchObject({
      actor_id: Number(given.admin.id),
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
}
