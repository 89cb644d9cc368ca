import { DataSource } from 'typeorm';
import { type RequestContext } from '../../audit/audit-actions.js';
import { type AuthUser } from '../../core/decorators.js';
import { PERMISSION_DENIED_MESSAGE } from '../../core/errors.js';
import { type Transaction } from '../../database/transactions.js';
import { fakeWritePath, unconnectedRepository } from '../../testing/fakes.js';
import { User } from '../../users/user.entity.js';
import { UserBulkRepository } from '../../users/user-bulk.repository.js';
import { type UserListParams } from '../membership/member-list-params.js';
import { ROLE_NOT_HELD_MESSAGE } from '../membership/membership.errors.js';
import { ModuleRole } from '../modules/module-role.js';
import { type HeldMembership, MembershipStatus } from '../membership/membership-status.js';
import { type MemberListsRepository } from '../membership/member-lists.repository.js';
import { ModuleRolesRepository } from '../membership/module-roles.repository.js';
import { UserModuleRole } from '../membership/user-module-role.entity.js';
import { type AuditOf, PersonnelService } from './personnel.service.js';

type Roles = ModuleRolesRepository;
type Lists = MemberListsRepository;

/** An active membership with no dates (the default). */
const OPEN = { status: MembershipStatus.Active, startsAt: null, endsAt: null };

/** The transaction the fake opens: a real, unconnected EntityManager, only ever compared by identity. */
const TRANSACTION: Transaction = new DataSource({ type: 'postgres' }).manager;

/** Modules and their role rows in memory, with what the service asked for; it serves the people lists too. */
class FakeRoles extends ModuleRolesRepository {
  /** module id → user id → role */
  readonly modules = new Map<string, Map<string, ModuleRole>>();
  readonly pages: { kind: 'personnel' | 'eligible'; filter: unknown }[] = [];
  readonly assigned: { ids: readonly string[]; role: ModuleRole; keepLecturers: boolean }[] = [];
  /** Runs between the service's first look at the roles and its write (another transaction committing). */
  beforeAssign: (() => void) | undefined;

  constructor(modules: Record<string, Record<string, ModuleRole>>) {
    super(unconnectedRepository(UserModuleRole));
    for (const [id, members] of Object.entries(modules))
      this.modules.set(id, new Map(Object.entries(members)));
  }

  private module(id: string): Map<string, ModuleRole> {
    const members = this.modules.get(id);
    if (!members) throw new Error(`the service wrote to module ${id}, which does not exist`);
    return members;
  }

  override callerRole(moduleId: string, callerId: number): Promise<ModuleRole | null | undefined> {
    const members = this.modules.get(moduleId);
    return Promise.resolve(members === undefined ? undefined : (members.get(String(callerId)) ?? null));
  }

  personnelPage(filter: Parameters<Lists['personnelPage']>[0]): ReturnType<Lists['personnelPage']> {
    this.pages.push({ kind: 'personnel', filter });
    return Promise.resolve({ items: [], total: 0 });
  }

  eligiblePage(filter: Parameters<Lists['eligiblePage']>[0]): ReturnType<Lists['eligiblePage']> {
    this.pages.push({ kind: 'eligible', filter });
    return Promise.resolve({ items: [], total: 0 });
  }

  override lockHeld(
    moduleId: string,
    userIds: readonly string[],
    manager: Transaction,
  ): Promise<HeldMembership[]> {
    expect(manager).toBe(TRANSACTION);
    const members = this.module(moduleId);
    return Promise.resolve(
      userIds.filter((id) => members.has(id)).map((id) => ({ userId: id, role: members.get(id)!, ...OPEN })),
    );
  }

  override writeMemberships(
    ...[moduleId, writes, manager, keepLecturers]: Parameters<Roles['writeMemberships']>
  ): Promise<string[]> {
    expect(manager).toBe(TRANSACTION);
    this.beforeAssign?.();
    const role = writes[0].role;
    this.assigned.push({
      ids: writes.map((write) => write.userId),
      role,
      keepLecturers: keepLecturers ?? false,
    });
    const members = this.module(moduleId);
    const written = writes
      .filter((write) => {
        const held = members.get(write.userId);
        if (held === write.role || (keepLecturers && held === ModuleRole.Lecturer)) return false;
        members.set(write.userId, write.role);
        return true;
      })
      .map((write) => write.userId);
    return Promise.resolve(written);
  }

  override remove(
    moduleId: string,
    userIds: readonly string[],
    role: ModuleRole,
    manager: Transaction,
  ): Promise<number> {
    expect(manager).toBe(TRANSACTION);
    const members = this.module(moduleId);
    const holders = userIds.filter((id) => members.get(id) === role);
    for (const id of holders) members.delete(id);
    return Promise.resolve(holders.length);
  }
}

class FakeUsers extends UserBulkRepository {
  readonly asked: (readonly string[])[] = [];

  constructor(private readonly existing: readonly string[]) {
    super(unconnectedRepository(User));
  }

  override lockExisting(ids: readonly string[], manager: Transaction): Promise<Set<string>> {
    expect(manager).toBe(TRANSACTION);
    this.asked.push(ids);
    return Promise.resolve(new Set(ids.filter((id) => this.existing.includes(id))));
  }
}

const ADMIN: AuthUser = { id: 1, admin: true };
const LECTURER: AuthUser = { id: 2, admin: false };
const ASSISTANT: AuthUser = { id: 3, admin: false };
const TUTOR: AuthUser = { id: 4, admin: false };
const STUDENT: AuthUser = { id: 5, admin: false };
const OUTSIDER: AuthUser = { id: 6, admin: false };

const CONTEXT: RequestContext = { actorId: 1, requestId: 'test', clientIp: '127.0.0.1' };
const ASSIGN: AuditOf<'personnel.assign'> = { action: 'personnel.assign', context: CONTEXT };
const REMOVE: AuditOf<'personnel.remove'> = { action: 'personnel.remove', context: CONTEXT };
const PARAMS: UserListParams = { paging: { page: 2, perPage: 5, offset: 5 }, sort: [] };

/** Module 10 with a Lecturer, an assistant, a tutor, a student and user 7 (a second Lecturer); users 1-9 exist. */
function setup() {
  const roles = new FakeRoles({
    '10': {
      '2': ModuleRole.Lecturer,
      '3': ModuleRole.AssistantLecturer,
      '4': ModuleRole.Tutor,
      '5': ModuleRole.Student,
      '7': ModuleRole.Lecturer,
    },
  });
  const users = new FakeUsers(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
  const { transactions, audit, events } = fakeWritePath(TRANSACTION);
  const service = new PersonnelService(roles, roles, users, transactions, audit, events);
  return { service, roles, users, transactions, audit, events, members: roles.modules.get('10')! };
}

describe(PersonnelService.name, () => {
  describe('lists', () => {
    it('answers 404 for a module that does not exist, before anything else', async () => {
      const { service, roles } = setup();
      await expect(service.list('99', ADMIN, PARAMS, 'personnel')).rejects.toMatchObject({
        status: 404,
        message: 'Module not found',
      });
      await expect(service.eligible('99', OUTSIDER, PARAMS)).rejects.toMatchObject({ status: 404 });
      expect(roles.pages).toEqual([]);
    });

    it('shows the personnel and the eligible users to admins and staff only', async () => {
      const { service } = setup();
      for (const caller of [ADMIN, LECTURER, ASSISTANT]) {
        await expect(service.list('10', caller, PARAMS, 'personnel')).resolves.toEqual({
          users: [],
          page: 2,
          per_page: 5,
          total: 0,
        });
        await expect(service.eligible('10', caller, PARAMS)).resolves.toMatchObject({ total: 0 });
      }
      for (const caller of [TUTOR, STUDENT, OUTSIDER]) {
        await expect(service.list('10', caller, PARAMS, 'personnel')).rejects.toMatchObject({
          status: 403,
          message: PERMISSION_DENIED_MESSAGE,
        });
        await expect(service.eligible('10', caller, PARAMS)).rejects.toMatchObject({ status: 403 });
      }
    });

    it('shows the students to teaching staff, always as the Student role whatever role was asked for', async () => {
      const { service, roles } = setup();
      await service.list('10', TUTOR, { ...PARAMS, role: ModuleRole.Lecturer }, 'students');
      await service.list('10', LECTURER, { ...PARAMS, role: ModuleRole.Tutor }, 'personnel');
      expect(roles.pages).toEqual([
        { kind: 'personnel', filter: { ...PARAMS, moduleId: '10', role: ModuleRole.Student } },
        { kind: 'personnel', filter: { ...PARAMS, moduleId: '10', role: ModuleRole.Tutor } },
      ]);
      for (const caller of [STUDENT, OUTSIDER])
        await expect(service.list('10', caller, PARAMS, 'students')).rejects.toMatchObject({ status: 403 });
    });
  });

  describe('assign', () => {
    it('gives each distinct user the role, and records one audit entry and one members change', async () => {
      const { service, members, audit, events, transactions } = setup();
      const count = await service.assign('10', LECTURER, [8, 5, 8, 4], ModuleRole.Tutor, ASSIGN);
      expect(count).toBe(3);
      expect([members.get('8'), members.get('5'), members.get('4')]).toEqual([
        ModuleRole.Tutor,
        ModuleRole.Tutor,
        ModuleRole.Tutor,
      ]);
      expect(transactions).toMatchObject({ opened: 1, failed: 0 });
      expect(audit.entries.map(({ transaction }) => transaction)).toEqual([TRANSACTION]);
      expect(events.recorded.map(({ transaction }) => transaction)).toEqual([TRANSACTION]);
      expect(audit.recorded).toEqual([
        {
          action: 'personnel.assign',
          targetType: 'module',
          targetIds: ['10'],
          summary: { role: ModuleRole.Tutor, user_ids: [8, 5, 4] },
        },
      ]);
      expect(events.allEvents).toEqual([
        {
          type: 'module.members_changed',
          data: {
            module_id: 10,
            added: [{ user_id: 8, role: ModuleRole.Tutor }],
            removed: [],
            changed: [{ user_id: 5, from: ModuleRole.Student, to: ModuleRole.Tutor }],
          },
        },
      ]);
    });

    it('records no members change when everyone held the role already', async () => {
      const { service, audit, events } = setup();
      await expect(service.assign('10', ADMIN, [4], ModuleRole.Tutor, ASSIGN)).resolves.toBe(1);
      expect(audit.recorded).toHaveLength(1);
      expect(events.allEvents).toEqual([]);
    });

    it('answers 404 for an unknown module before the caller rights and the users', async () => {
      const { service, users, transactions } = setup();
      await expect(service.assign('99', STUDENT, [12345], ModuleRole.Lecturer, ASSIGN)).rejects.toMatchObject(
        {
          status: 404,
          message: 'Module not found',
        },
      );
      expect(users.asked).toEqual([]);
      expect(transactions.failed).toBe(1);
    });

    it('refuses a caller who may not manage the role with 403, before looking at the users', async () => {
      const { service, users, members } = setup();
      const refusals: [AuthUser, ModuleRole][] = [
        [LECTURER, ModuleRole.Lecturer],
        [ASSISTANT, ModuleRole.Student],
        [TUTOR, ModuleRole.Student],
        [STUDENT, ModuleRole.Student],
        [OUTSIDER, ModuleRole.Tutor],
      ];
      for (const [caller, role] of refusals) {
        await expect(service.assign('10', caller, [12345], role, ASSIGN)).rejects.toMatchObject({
          status: 403,
          message: PERMISSION_DENIED_MESSAGE,
        });
      }
      expect(users.asked).toEqual([]);
      expect(members.get('8')).toBeUndefined();
    });

    it('answers 404 naming the first unknown user in request order, one beyond 64 bits included', async () => {
      const { service, users, audit, roles } = setup();
      await expect(
        service.assign('10', ADMIN, [8, 404, 403], ModuleRole.Tutor, ASSIGN),
      ).rejects.toMatchObject({
        status: 404,
        message: 'User with ID 404 does not exist',
      });
      // 2^63 as a JSON number: no bigint, so no user, and never sent to the database.
      await expect(service.assign('10', ADMIN, [2 ** 63, 8], ModuleRole.Tutor, ASSIGN)).rejects.toMatchObject(
        {
          message: 'User with ID 9223372036854775808 does not exist',
        },
      );
      expect(users.asked).toEqual([['8', '404', '403'], ['8']]);
      expect(roles.assigned).toEqual([]);
      expect(audit.recorded).toEqual([]);
    });

    it("refuses a Lecturer changing a Lecturer's role, their own included, and changes nothing", async () => {
      const { service, members, roles, audit } = setup();
      for (const ids of [[7], [8, 2]]) {
        await expect(service.assign('10', LECTURER, ids, ModuleRole.Tutor, ASSIGN)).rejects.toMatchObject({
          status: 403,
        });
      }
      expect(roles.assigned).toEqual([]);
      expect([members.get('7'), members.get('2'), members.get('8')]).toEqual([
        ModuleRole.Lecturer,
        ModuleRole.Lecturer,
        undefined,
      ]);
      expect(audit.recorded).toEqual([]);
      // An admin may.
      await expect(service.assign('10', ADMIN, [7], ModuleRole.Tutor, ASSIGN)).resolves.toBe(1);
      expect(members.get('7')).toBe(ModuleRole.Tutor);
    });

    it('refuses a Lecturer whose user became a Lecturer meanwhile: the write keeps the row, the re-check sees it', async () => {
      const { service, roles, members, audit } = setup();
      roles.beforeAssign = () => members.set('8', ModuleRole.Lecturer);
      await expect(service.assign('10', LECTURER, [8], ModuleRole.Tutor, ASSIGN)).rejects.toMatchObject({
        status: 403,
      });
      expect(roles.assigned).toEqual([{ ids: ['8'], role: ModuleRole.Tutor, keepLecturers: true }]);
      expect(members.get('8')).toBe(ModuleRole.Lecturer);
      expect(audit.recorded).toEqual([]);
      // An admin's write needs no such care.
      roles.beforeAssign = undefined;
      await service.assign('10', ADMIN, [9], ModuleRole.Tutor, ASSIGN);
      expect(roles.assigned[1]).toMatchObject({ keepLecturers: false });
    });
  });

  describe('remove', () => {
    it('takes the role from every named user, recording the removal', async () => {
      const { service, members, audit, events } = setup();
      await expect(service.remove('10', LECTURER, [4, 4], ModuleRole.Tutor, REMOVE)).resolves.toBe(1);
      expect(members.has('4')).toBe(false);
      expect(audit.recorded).toEqual([
        {
          action: 'personnel.remove',
          targetType: 'module',
          targetIds: ['10'],
          summary: { role: ModuleRole.Tutor, user_ids: [4] },
        },
      ]);
      expect(events.allEvents).toEqual([
        {
          type: 'module.members_changed',
          data: { module_id: 10, added: [], removed: [{ user_id: 4, role: ModuleRole.Tutor }], changed: [] },
        },
      ]);
    });

    it('answers 409 when a named user does not hold the role, failing the whole transaction', async () => {
      const { service, audit, events, transactions } = setup();
      await expect(service.remove('10', ADMIN, [4, 5], ModuleRole.Tutor, REMOVE)).rejects.toMatchObject({
        status: 409,
        message: ROLE_NOT_HELD_MESSAGE,
      });
      expect(transactions).toMatchObject({ opened: 1, failed: 1 });
      expect(audit.recorded).toEqual([]);
      expect(events.allEvents).toEqual([]);
    });

    it('refuses a Lecturer removing a Lecturer, and a Tutor removing anyone', async () => {
      const { service, members } = setup();
      await expect(service.remove('10', LECTURER, [7], ModuleRole.Lecturer, REMOVE)).rejects.toMatchObject({
        status: 403,
      });
      await expect(service.remove('10', TUTOR, [5], ModuleRole.Student, REMOVE)).rejects.toMatchObject({
        status: 403,
      });
      expect([members.get('7'), members.get('5')]).toEqual([ModuleRole.Lecturer, ModuleRole.Student]);
    });
  });
});
