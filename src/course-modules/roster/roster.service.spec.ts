import { PermissionDenied } from '../../core/errors.js';
import { type CsvRow } from '../../csv/csv-reader.js';
import { ImportHasErrors } from '../../csv/csv.errors.js';
import { type Transaction } from '../../database/transactions.js';
import { CONTEXT, DEFAULT_CONFIG, fakeWritePath, unconnectedRepository } from '../../testing/fakes.js';
import { User } from '../../users/user.entity.js';
import { UserBulkRepository } from '../../users/user-bulk.repository.js';
import { ModuleNotFound } from '../modules/module.errors.js';
import { ModuleRole } from '../modules/module-role.js';
import { MemberListsRepository } from '../membership/member-lists.repository.js';
import { ModuleRolesRepository } from '../membership/module-roles.repository.js';
import { type Member, type MembershipWrite, MembershipStatus } from '../membership/membership-status.js';
import { type RosterColumn, type RosterOptionalColumn } from './roster-import.js';
import { type RosterImportOptions, RosterService } from './roster.service.js';
import { UserModuleRole } from '../membership/user-module-role.entity.js';

// The unit tier's one fake style: src/testing/fakes.ts.
const MODULE = '42';
const ADMIN = { id: 1, admin: true };
const LECTURER = { id: 9, admin: false };

/** Module 42's roster in memory; `callerRole` answers from it (null for an admin who holds no role). */
class FakeRoles extends ModuleRolesRepository {
  readonly applied: { writes: unknown[]; removeIds: readonly number[]; keepLecturers: boolean }[] = [];
  lecturersAfterWrite = 0;

  constructor(public members: Member[]) {
    super(unconnectedRepository(UserModuleRole));
  }

  override callerRole(moduleId: string, callerId: number): Promise<ModuleRole | null | undefined> {
    if (moduleId !== MODULE) return Promise.resolve(undefined);
    return Promise.resolve(this.members.find((member) => member.id === callerId)?.role ?? null);
  }

  override lockMembers(): Promise<Member[]> {
    return Promise.resolve(this.members.map((member) => ({ ...member })));
  }

  override writeMemberships(
    _moduleId: string,
    writes: readonly MembershipWrite[],
    _manager: Transaction,
    keepLecturers = false,
  ): Promise<string[]> {
    this.applied.push({ writes: [...writes], removeIds: [], keepLecturers });
    return Promise.resolve(writes.map((write) => write.userId));
  }

  override removeMembers(_moduleId: string, userIds: readonly number[]): Promise<void> {
    const last = this.applied.at(-1);
    if (last) last.removeIds = userIds;
    return Promise.resolve();
  }

  override countLecturers(): Promise<number> {
    return Promise.resolve(this.lecturersAfterWrite);
  }
}

/** Users by lower-cased username and email. */
class FakeUsers extends UserBulkRepository {
  constructor(private readonly known: { id: number; username: string }[]) {
    super(unconnectedRepository(User));
  }

  override lockByNames(values: readonly string[]): Promise<Map<string, { id: number; username: string }>> {
    const found = new Map<string, { id: number; username: string }>();
    for (const user of this.known) {
      for (const key of [user.username, `${user.username}@example.edu`])
        if (values.includes(key)) found.set(key, user);
    }
    return Promise.resolve(found);
  }
}

/** A stored member with an active, open membership. */
const member = (id: number, username: string, role: ModuleRole): Member => ({
  id,
  username,
  role,
  status: MembershipStatus.Active,
  startsAt: null,
  endsAt: null,
});

/** A file with only the required columns (user, role): no membership columns. */
const NO_COLUMNS: ReadonlySet<RosterOptionalColumn> = new Set();

const rows = (...lines: [string, string][]): CsvRow<RosterColumn>[] =>
  lines.map(([user, role], index) => ({
    line: index + 2,
    cells: { user, role, status: '', starts_at: '', ends_at: '' },
  }));

const ADD: RosterImportOptions = { mode: 'add', onRemove: 'delete', maxRemovals: undefined, dryRun: false };

function setUp(members: Member[]) {
  const roles = new FakeRoles(members);
  const users = new FakeUsers([
    { id: 2, username: 'ada' },
    { id: 3, username: 'bob' },
    { id: 4, username: 'cy' },
    { id: 9, username: 'lee' },
  ]);
  const { transactions, audit, events } = fakeWritePath();
  const lists = new MemberListsRepository(unconnectedRepository(UserModuleRole), DEFAULT_CONFIG);
  const service = new RosterService(transactions, roles, lists, users, audit, events);
  return { roles, transactions, audit, events, service };
}

describe('RosterService', () => {
  it('writes the roster, one audit event and one members_changed event, all in the import transaction', async () => {
    const { service, roles, audit, events, transactions } = setUp([
      member(3, 'bob', ModuleRole.Student),
      member(4, 'cy', ModuleRole.Tutor),
    ]);
    const result = await service.import(
      MODULE,
      ADMIN,
      rows(['ada', 'Student'], ['bob@example.edu', 'Tutor'], ['cy', 'Tutor']),
      NO_COLUMNS,
      ADD,
      CONTEXT,
    );
    expect(result).toMatchObject({ assigned: 1, changed: 1, unchanged: 1, errors: 0, dry_run: false });
    expect(roles.applied).toEqual([
      {
        writes: [
          {
            userId: '2',
            role: ModuleRole.Student,
            status: MembershipStatus.Active,
            startsAt: null,
            endsAt: null,
          },
          {
            userId: '3',
            role: ModuleRole.Tutor,
            status: MembershipStatus.Active,
            startsAt: null,
            endsAt: null,
          },
        ],
        removeIds: [],
        keepLecturers: false,
      },
    ]);
    expect(transactions).toMatchObject({ opened: 1, long: 1, failed: 0 });
    expect(audit.entries).toEqual([
      {
        transaction: transactions.marker,
        context: CONTEXT,
        entry: {
          action: 'roster.import',
          targetType: 'module',
          targetIds: [MODULE],
          summary: { mode: 'add', assigned: 1, changed: 1, unchanged: 1, removed: 0 },
        },
      },
    ]);
    expect(events.recorded).toEqual([
      {
        transaction: transactions.marker,
        events: [
          {
            type: 'module.members_changed',
            data: {
              module_id: 42,
              added: [{ user_id: 2, role: ModuleRole.Student }],
              removed: [],
              changed: [{ user_id: 3, from: ModuleRole.Student, to: ModuleRole.Tutor }],
            },
          },
        ],
      },
    ]);
  });

  it('answers a dry run with the same rows and writes nothing', async () => {
    const { service, roles, audit, events } = setUp([]);
    const result = await service.import(
      MODULE,
      ADMIN,
      rows(['ada', 'Student']),
      NO_COLUMNS,
      { ...ADD, dryRun: true },
      CONTEXT,
    );
    expect(result).toMatchObject({ assigned: 1, dry_run: true });
    expect([roles.applied, audit.entries, events.recorded]).toEqual([[], [], []]);
  });

  it('writes nothing, and records nothing, when every row is unchanged', async () => {
    const { service, roles, audit, events } = setUp([member(2, 'ada', ModuleRole.Student)]);
    const result = await service.import(MODULE, ADMIN, rows(['ada', 'Student']), NO_COLUMNS, ADD, CONTEXT);
    expect(result).toMatchObject({ unchanged: 1 });
    expect([roles.applied, audit.entries, events.recorded]).toEqual([[], [], []]);
  });

  it('refuses a file with a row error as a whole (422) and writes nothing', async () => {
    const { service, roles } = setUp([]);
    await expect(
      service.import(
        MODULE,
        ADMIN,
        rows(['ada', 'Student'], ['nobody', 'Student']),
        NO_COLUMNS,
        ADD,
        CONTEXT,
      ),
    ).rejects.toThrow(ImportHasErrors);
    expect(roles.applied).toEqual([]);
  });

  it('lets a Lecturer write only non-Lecturer roles, and refuses when a Lecturer was written meanwhile', async () => {
    const { service, roles } = setUp([member(9, 'lee', ModuleRole.Lecturer)]);
    await service.import(MODULE, LECTURER, rows(['ada', 'Tutor']), NO_COLUMNS, ADD, CONTEXT);
    expect(roles.applied.at(-1)?.keepLecturers).toBe(true);
    roles.lecturersAfterWrite = 1;
    await expect(
      service.import(MODULE, LECTURER, rows(['bob', 'Tutor']), NO_COLUMNS, ADD, CONTEXT),
    ).rejects.toThrow(PermissionDenied);
  });

  it('answers 404 for an unknown module and 403 for a caller who may not change its personnel', async () => {
    const { service } = setUp([member(5, 'tutor', ModuleRole.Tutor)]);
    await expect(service.assertMayImport('7', ADMIN)).rejects.toThrow(ModuleNotFound);
    await expect(service.assertMayImport(MODULE, { id: 5, admin: false })).rejects.toThrow(PermissionDenied);
    await expect(service.assertMayImport(MODULE, ADMIN)).resolves.toBeUndefined();
    await expect(
      service.import('7', ADMIN, rows(['ada', 'Student']), NO_COLUMNS, ADD, CONTEXT),
    ).rejects.toThrow(ModuleNotFound);
  });
});
