import { type Transaction } from '../../database/transactions.js';
import { type ChangeEventType, type NewChangeEvent } from '../../events/change-event-types.js';
import { CONTEXT, fakeWritePath, unconnectedRepository } from '../../testing/fakes.js';
import { CourseModule } from '../modules/course-module.entity.js';
import { CourseModulesRepository } from '../modules/course-modules.repository.js';
import { type RolloverInput } from './dto/rollover-body.dto.js';
import { type ModuleSource } from '../modules/module.mapper.js';
import { ModuleRole } from '../modules/module-role.js';
import { type CopiedMembers, ModuleRolesRepository } from '../membership/module-roles.repository.js';
import { DEFAULT_ROLLOVER_ROLES, ROLLOVER_MAX, TooManyModules } from './rollover.js';
import { RolloverService } from './rollover.service.js';
import { UserModuleRole } from '../membership/user-module-role.entity.js';

// The unit tier's one fake style: src/testing/fakes.ts.

const AT = new Date('2026-11-21T08:41:00.123Z');
const STAFF: RolloverInput = {
  fromYear: 2026,
  toYear: 2027,
  codes: undefined,
  roles: [...DEFAULT_ROLLOVER_ROLES],
};

/** The modules table in memory; ids are decimal strings, as the repository answers them. */
class FakeModules extends CourseModulesRepository {
  readonly rows: ModuleSource[] = [];
  readonly reads: { lock: boolean; limit: number; transaction: Transaction }[] = [];
  readonly inserts: { sourceIds: readonly string[]; toYear: number }[] = [];
  /** Codes another transaction creates in the target year between the service's read and its insert. */
  readonly createdMeanwhile = new Set<string>();

  constructor() {
    super(unconnectedRepository(CourseModule));
  }

  add(code: string, year: number): string {
    const id = String(this.rows.length + 1);
    this.rows.push({
      id: Number(id),
      code,
      year,
      description: `${code} ${year}`,
      credits: 15,
      createdAt: AT,
      updatedAt: AT,
    });
    return id;
  }

  override rolloverSources(
    filter: { fromYear: number; codes: readonly string[] | undefined },
    limit: number,
    options: { lock: boolean; manager: Transaction },
  ): Promise<{ id: string; code: string }[]> {
    this.reads.push({ lock: options.lock, limit, transaction: options.manager });
    return Promise.resolve(
      this.rows
        .filter((row) => row.year === filter.fromYear && (filter.codes?.includes(row.code) ?? true))
        .slice(0, limit)
        .map(({ id, code }) => ({ id: String(id), code })),
    );
  }

  override idsByCode(codes: readonly string[], year: number): Promise<Map<string, string>> {
    return Promise.resolve(
      new Map(
        this.rows
          .filter((row) => row.year === year && codes.includes(row.code))
          .map((row) => [row.code, String(row.id)]),
      ),
    );
  }

  override insertCopies(sourceIds: readonly string[], toYear: number): Promise<ModuleSource[]> {
    this.inserts.push({ sourceIds, toYear });
    for (const code of this.createdMeanwhile) this.add(code, toYear);
    this.createdMeanwhile.clear();
    // As the INSERT … ORDER BY s.code ON CONFLICT DO NOTHING: by code, skipping namesakes that exist.
    const created = this.rows
      .filter((row) => sourceIds.includes(String(row.id)))
      .filter((source) => !this.rows.some((row) => row.year === toYear && row.code === source.code))
      .map((source) => source.code)
      .sort()
      .map((code) => {
        const id = this.add(code, toYear);
        return this.rows.find((row) => String(row.id) === id)!;
      });
    return Promise.resolve(created);
  }
}

/** Role rows in memory: module id → user id → role. */
class FakeRoles extends ModuleRolesRepository {
  readonly members = new Map<string, Map<string, ModuleRole>>();
  readonly copies: { from: readonly string[]; to: readonly string[]; events: readonly NewChangeEvent[] }[] =
    [];

  constructor() {
    super(unconnectedRepository(UserModuleRole));
  }

  set(moduleId: string, members: Record<string, ModuleRole>): void {
    this.members.set(moduleId, new Map(Object.entries(members)));
  }

  /** Per pair, the rows of `from` in `roles` whose user holds nothing in `to`. */
  private toCopy(from: string, to: string | null, roles: readonly ModuleRole[]): [string, ModuleRole][] {
    const held = to === null ? new Map<string, ModuleRole>() : (this.members.get(to) ?? new Map());
    return [...(this.members.get(from) ?? [])].filter(
      ([user, role]) => roles.includes(role) && !held.has(user),
    );
  }

  override countMembersToCopy(
    pairs: { from: readonly string[]; to: readonly (string | null)[] },
    roles: readonly ModuleRole[],
  ): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    pairs.from.forEach((from, i) => {
      const n = this.toCopy(from, pairs.to[i], roles).length;
      if (n > 0) counts.set(from, n);
    });
    return Promise.resolve(counts);
  }

  override copyMembers(
    pairs: { from: readonly string[]; to: readonly (string | null)[] },
    roles: readonly ModuleRole[],
    events: readonly NewChangeEvent[],
  ): Promise<CopiedMembers> {
    const to = pairs.to.map((id) => id!);
    this.copies.push({ from: pairs.from, to, events });
    const copied = new Map<string, number>();
    pairs.from.forEach((from, i) => {
      const rows = this.toCopy(from, to[i], roles);
      if (rows.length === 0) return;
      const target = this.members.get(to[i]) ?? new Map<string, ModuleRole>();
      for (const [user, role] of rows) target.set(user, role);
      this.members.set(to[i], target);
      copied.set(to[i], rows.length);
    });
    const written = new Map<ChangeEventType, number>([['module.created', events.length]]);
    if (copied.size > 0) written.set('module.members_changed', copied.size);
    return Promise.resolve({ copied, events: written });
  }
}

/**
 * 2026: CSC100 (id 1; Lecturer 7, Tutor 8, Student 9), MAT200 (id 2; Lecturer 7), BIO300 (id 3; no members);
 * 2027: CSC100 already (id 4, where Tutor 8 is already a Student).
 */
function setUp() {
  const modules = new FakeModules();
  const roles = new FakeRoles();
  const csc = modules.add('CSC100', 2026);
  const mat = modules.add('MAT200', 2026);
  modules.add('BIO300', 2026);
  const next = modules.add('CSC100', 2027);
  roles.set(csc, { '7': ModuleRole.Lecturer, '8': ModuleRole.Tutor, '9': ModuleRole.Student });
  roles.set(mat, { '7': ModuleRole.Lecturer });
  roles.set(next, { '8': ModuleRole.Student });
  const { transactions, audit, events } = fakeWritePath();
  const service = new RolloverService(transactions, modules, roles, audit, events);
  return { service, modules, roles, transactions, audit, events };
}

describe(RolloverService.name, () => {
  it('creates the missing namesakes, copies the staff they lack, and audits once, in one long transaction', async () => {
    const { service, modules, roles, transactions, audit, events } = setUp();
    const result = await service.rollover(
      { ...STAFF, codes: ['MAT200', 'CSC100', 'BIO300', 'ZZZ999'] },
      false,
      CONTEXT,
    );
    expect(result).toEqual({
      modules: [
        { code: 'BIO300', from_id: 3, to_id: 5, action: 'create', members_copied: 0 },
        { code: 'CSC100', from_id: 1, to_id: 4, action: 'exists', members_copied: 1 },
        { code: 'MAT200', from_id: 2, to_id: 6, action: 'create', members_copied: 1 },
        { code: 'ZZZ999', from_id: null, to_id: null, action: 'missing', members_copied: 0 },
      ],
      created: 2,
      existing: 1,
      missing: 1,
      members_copied: 2,
      dry_run: false,
    });
    expect(transactions).toMatchObject({ opened: 1, long: 1, failed: 0 });
    expect(modules.reads).toEqual([
      { lock: true, limit: ROLLOVER_MAX + 1, transaction: transactions.marker },
    ]);
    // Only the modules without a namesake are copied; the student stays behind, Tutor 8 keeps the role held.
    expect(modules.inserts).toEqual([{ sourceIds: ['2', '3'], toYear: 2027 }]);
    expect(Object.fromEntries(roles.members.get('4')!)).toEqual({
      '7': ModuleRole.Lecturer,
      '8': ModuleRole.Student,
    });
    expect(Object.fromEntries(roles.members.get('6')!)).toEqual({ '7': ModuleRole.Lecturer });
    // The module.created events go with the copy's statement; its counts reach the metric after commit.
    expect(
      roles.copies[0].events.map((event) => [event.type, (event.data as { code: string }).code]),
    ).toEqual([
      ['module.created', 'BIO300'],
      ['module.created', 'MAT200'],
    ]);
    expect(events.recorded).toEqual([]);
    expect(events.noted).toEqual([
      {
        transaction: transactions.marker,
        written: new Map([
          ['module.created', 2],
          ['module.members_changed', 2],
        ]),
      },
    ]);
    expect(audit.entries).toEqual([
      {
        transaction: transactions.marker,
        context: CONTEXT,
        entry: {
          action: 'module.rollover',
          targetType: 'module',
          targetIds: [5, 6],
          summary: { from_year: 2026, to_year: 2027, created: 2, existing: 1, missing: 1, members_copied: 2 },
        },
      },
    ]);
  });

  it('answers a dry run from reads alone: no lock, no insert, no copy, no audit, no event', async () => {
    const { service, modules, roles, audit, events } = setUp();
    const result = await service.rollover(STAFF, true, CONTEXT);
    expect(result).toMatchObject({ created: 2, existing: 1, missing: 0, members_copied: 2, dry_run: true });
    expect(result.modules.map((row) => [row.code, row.action, row.to_id, row.members_copied])).toEqual([
      ['BIO300', 'create', null, 0],
      ['CSC100', 'exists', 4, 1],
      ['MAT200', 'create', null, 1],
    ]);
    expect(modules.reads.map((read) => read.lock)).toEqual([false]);
    expect([modules.inserts, roles.copies, audit.entries, events.recorded, events.noted]).toEqual([
      [],
      [],
      [],
      [],
      [],
    ]);
    expect(roles.members.has('5')).toBe(false);
  });

  it('refuses more than the maximum of distinct codes with 413 before opening a transaction', async () => {
    const { service, transactions } = setUp();
    const codes = Array.from({ length: ROLLOVER_MAX + 1 }, (_, i) => `C${i}`);
    await expect(service.rollover({ ...STAFF, codes }, false, CONTEXT)).rejects.toThrow(TooManyModules);
    expect(transactions.opened).toBe(0);
    // Repeats are one code.
    const repeated = [...Array<string>(ROLLOVER_MAX + 1).fill('CSC100')];
    await expect(service.rollover({ ...STAFF, codes: repeated }, true, CONTEXT)).resolves.toMatchObject({
      existing: 1,
    });
  });

  it('refuses a source year holding more than the maximum of modules with 413, inside the transaction', async () => {
    const { service, modules, transactions } = setUp();
    for (let i = 0; i < ROLLOVER_MAX; i++) modules.add(`X${i}`, 2026);
    await expect(service.rollover(STAFF, false, CONTEXT)).rejects.toThrow(TooManyModules);
    expect(transactions).toMatchObject({ opened: 1, failed: 1 });
    expect(modules.inserts).toEqual([]);
  });

  it('takes a namesake created meanwhile as existing, and still copies the members into it', async () => {
    const { service, modules, roles, audit } = setUp();
    modules.createdMeanwhile.add('MAT200');
    const result = await service.rollover({ ...STAFF, codes: ['MAT200'] }, false, CONTEXT);
    expect(result.modules).toEqual([
      { code: 'MAT200', from_id: 2, to_id: 5, action: 'exists', members_copied: 1 },
    ]);
    expect(Object.fromEntries(roles.members.get('5')!)).toEqual({ '7': ModuleRole.Lecturer });
    expect(audit.entries.map(({ entry }) => entry.targetIds)).toEqual([[]]);
  });

  it('records the module.created events itself when no role is copied, and audits nothing when nothing changed', async () => {
    const { service, roles, audit, events, transactions } = setUp();
    await service.rollover({ ...STAFF, codes: ['BIO300'], roles: [] }, false, CONTEXT);
    expect(roles.copies).toEqual([]);
    expect(events.recorded).toHaveLength(1);
    expect(events.recorded[0].transaction).toBe(transactions.marker);
    expect(events.recorded[0].events).toMatchObject([
      { type: 'module.created', data: { id: 5, code: 'BIO300', year: 2027 } },
    ]);
    expect(audit.entries).toHaveLength(1);

    await service.rollover({ ...STAFF, codes: ['BIO300'], roles: [] }, false, CONTEXT);
    expect(audit.entries).toHaveLength(1);
    expect(events.recorded.at(-1)?.events).toEqual([]);
  });
});
