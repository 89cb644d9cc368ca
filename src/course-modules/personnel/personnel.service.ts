import { Inject, Injectable } from '@nestjs/common';
import { type AuditAction, type RequestContext } from '../../audit/audit-actions.js';
import { AuditService } from '../../audit/audit.service.js';
import { type AuthUser } from '../../core/decorators.js';
import { PermissionDenied } from '../../core/errors.js';
import { INT64_MAX } from '../../core/ids.js';
import { type Transaction, Transactions } from '../../database/transactions.js';
import { changesMembers, type MembersChanged } from '../../events/change-event-types.js';
import { ChangeEventsService } from '../../events/change-events.service.js';
import { toUserSummary } from '../../users/user.mapper.js';
import { type UserSummary } from '../../users/user.shape.js';
import { UserBulkRepository } from '../../users/user-bulk.repository.js';
import { type UserListParams } from '../membership/member-list-params.js';
import {
  canManageRole,
  canViewPersonnel,
  canViewStudents,
  mayReassign,
  type ModuleViewer,
} from '../modules/module-access.js';
import { ModuleNotFound, UserDoesNotExist } from '../modules/module.errors.js';
import { NotMembers, RoleNotHeld } from '../membership/membership.errors.js';
import { type MembershipChange } from '../membership/dto/membership-fields.js';
import { type HeldMembership } from '../membership/membership-status.js';
import { changeOf, givenFields, membersChange, membershipAfter } from '../membership/membership-changes.js';
import { toPersonnelMember } from '../membership/membership.mapper.js';
import { type PersonnelMember } from '../membership/membership.shape.js';
import { type Page } from '../../database/sql.js';
import { MemberListsRepository } from '../membership/member-lists.repository.js';
import { ModuleRolesRepository } from '../membership/module-roles.repository.js';
import { ModuleRole } from '../modules/module-role.js';

export interface UserPage<T> {
  users: T[];
  page: number;
  per_page: number;
  total: number;
}

/** Which list is asked for: the whole personnel (staff only) or the student roster (teaching staff). */
type RosterView = 'personnel' | 'students';

/** The named ids once each, in request order, as exact decimal strings. */
function distinctIds(ids: readonly number[]): string[] {
  return [...new Set(ids.map((id) => BigInt(id).toString()))];
}

function toPage<T, R>({ items, total }: Page<T>, params: UserListParams, map: (row: T) => R): UserPage<R> {
  return { users: items.map(map), page: params.paging.page, per_page: params.paging.perPage, total };
}

/** Which audit action a group write records, and for whom. */
export interface AuditOf<A extends AuditAction> {
  action: A;
  context: RequestContext;
}

/** Personnel (§4.1) and students (§4.2) of a module. Writes are all-or-nothing. */
@Injectable()
export class PersonnelService {
  // Each collaborator typed as what is used of it (injected by its class), so a unit test can fake it.
  constructor(
    @Inject(ModuleRolesRepository)
    private readonly roles: Pick<
      ModuleRolesRepository,
      'callerRole' | 'lockHeld' | 'writeMemberships' | 'remove'
    >,
    @Inject(MemberListsRepository)
    private readonly lists: Pick<MemberListsRepository, 'personnelPage' | 'eligiblePage'>,
    @Inject(UserBulkRepository) private readonly users: Pick<UserBulkRepository, 'lockExisting'>,
    @Inject(Transactions) private readonly transactions: Pick<Transactions, 'run'>,
    @Inject(AuditService) private readonly auditTrail: Pick<AuditService, 'record'>,
    @Inject(ChangeEventsService) private readonly changeEvents: Pick<ChangeEventsService, 'record'>,
  ) {}

  /** 404 for an unknown module, else the caller's standing in it; `lock` keeps the module until commit. */
  private async viewerOf(
    moduleId: string,
    caller: AuthUser,
    lock?: { transaction: Transaction },
  ): Promise<ModuleViewer> {
    const role = await this.roles.callerRole(moduleId, caller.id, {
      lock: lock !== undefined,
      manager: lock?.transaction,
    });
    if (role === undefined) throw new ModuleNotFound();
    return { admin: caller.admin, role };
  }

  async list(
    moduleId: string,
    caller: AuthUser,
    params: UserListParams,
    view: RosterView,
  ): Promise<UserPage<PersonnelMember>> {
    const viewer = await this.viewerOf(moduleId, caller);
    const allowed = view === 'students' ? canViewStudents(viewer) : canViewPersonnel(viewer);
    if (!allowed) throw new PermissionDenied();
    const role = view === 'students' ? ModuleRole.Student : params.role;
    return toPage(await this.lists.personnelPage({ ...params, moduleId, role }), params, toPersonnelMember);
  }

  async eligible(moduleId: string, caller: AuthUser, params: UserListParams): Promise<UserPage<UserSummary>> {
    const viewer = await this.viewerOf(moduleId, caller);
    if (!canViewPersonnel(viewer)) throw new PermissionDenied();
    return toPage(await this.lists.eligiblePage({ ...params, moduleId }), params, toUserSummary);
  }

  /**
   * Gives each named user `role` in the module, replacing another role there, with the membership fields given
   * (an omitted one keeps a stored membership's value; a new membership gets the default). Returns the distinct
   * count.
   */
  async assign(
    moduleId: string,
    caller: AuthUser,
    userIds: readonly number[],
    role: ModuleRole,
    audit: AuditOf<'personnel.assign' | 'students.enrol'>,
    membership: MembershipChange = {},
  ): Promise<number> {
    const summary = givenFields(membership);
    return this.changeRoles(
      moduleId,
      caller,
      userIds,
      role,
      audit,
      summary,
      async (transaction, ids, viewer) => {
        const held = await this.roles.lockHeld(moduleId, ids, transaction);
        const otherRoles = (rows: HeldMembership[]) =>
          rows.filter((row) => row.role !== role).map((row) => row.role);
        // A Lecturer may not change an existing Lecturer's role (403, after the users' existence).
        if (!mayReassign(viewer, otherRoles(held))) throw new PermissionDenied();
        const before = new Map(held.map((row) => [row.userId, row]));
        const writes = ids.map((id) => membershipAfter(id, role, membership, before.get(id)));
        // Nor one that an admin's transaction committed since the check: the write keeps it, the re-check sees it.
        const keepLecturers = !mayReassign(viewer, [ModuleRole.Lecturer]);
        const written = await this.roles.writeMemberships(moduleId, writes, transaction, keepLecturers);
        if (
          keepLecturers &&
          !mayReassign(viewer, otherRoles(await this.roles.lockHeld(moduleId, ids, transaction)))
        )
          throw new PermissionDenied();
        return { count: ids.length, change: changeOf(moduleId, before, writes, written) };
      },
    );
  }

  /**
   * `PATCH …/members` (docs/api.md §15): sets the given membership fields of every named user, keeping their
   * roles. All must hold a role in the module (else 409) that the caller may manage (else 403, first).
   */
  async updateMembers(
    moduleId: string,
    caller: AuthUser,
    userIds: readonly number[],
    membership: MembershipChange,
    context: RequestContext,
  ): Promise<number> {
    const ids = distinctIds(userIds);
    return this.transactions.run(async (transaction) => {
      const viewer = await this.viewerOf(moduleId, caller, { transaction });
      // Someone who may manage no role at all is refused before the users are looked at, as on the POST.
      if (!canManageRole(viewer, ModuleRole.Student)) throw new PermissionDenied();
      await this.requireUsers(ids, transaction);
      const held = await this.roles.lockHeld(moduleId, ids, transaction);
      if (held.some((row) => !canManageRole(viewer, row.role))) throw new PermissionDenied();
      if (held.length !== ids.length) throw new NotMembers();
      const before = new Map(held.map((row) => [row.userId, row]));
      const writes = held.map((row) => membershipAfter(row.userId, row.role, membership, row));
      // Every row is locked and checked above, so none changes role behind the caller's back.
      const written = await this.roles.writeMemberships(moduleId, writes, transaction);
      await this.auditTrail.record(transaction, context, {
        action: 'members.update',
        targetType: 'module',
        targetIds: [moduleId],
        summary: { user_ids: ids.map(Number), ...givenFields(membership) },
      });
      const change = changeOf(moduleId, before, writes, written);
      if (written.length > 0) {
        change.status_changed ??= [];
        await this.changeEvents.record(transaction, [{ type: 'module.members_changed', data: change }]);
      }
      return ids.length;
    });
  }

  /** Takes `role` away from each named user; all must hold it, else nothing changes (409). */
  async remove(
    moduleId: string,
    caller: AuthUser,
    userIds: readonly number[],
    role: ModuleRole,
    audit: AuditOf<'personnel.remove' | 'students.remove'>,
  ): Promise<number> {
    return this.changeRoles(moduleId, caller, userIds, role, audit, {}, async (transaction, ids) => {
      const removed = await this.roles.remove(moduleId, ids, role, transaction);
      // Throwing rolls the transaction back, so a partial removal never commits.
      if (removed !== ids.length) throw new RoleNotHeld();
      const change = membersChange(moduleId);
      change.removed = ids.map((userId) => ({ user_id: Number(userId), role }));
      return { count: removed, change };
    });
  }

  /**
   * The checks every personnel write makes, in the contract's order, inside one transaction: the module
   * exists (404, locked), the caller may manage `role` (403), every named user exists (404, locked). `change`
   * then runs with the distinct ids; throwing from it rolls everything back.
   */
  private changeRoles(
    moduleId: string,
    caller: AuthUser,
    userIds: readonly number[],
    role: ModuleRole,
    audit: AuditOf<AuditAction>,
    fields: Record<string, unknown>,
    change: (
      transaction: Transaction,
      ids: string[],
      viewer: ModuleViewer,
    ) => Promise<{ count: number; change: MembersChanged }>,
  ): Promise<number> {
    const ids = distinctIds(userIds);
    return this.transactions.run(async (transaction) => {
      const viewer = await this.viewerOf(moduleId, caller, { transaction });
      if (!canManageRole(viewer, role)) throw new PermissionDenied();
      await this.requireUsers(ids, transaction);
      const result = await change(transaction, ids, viewer);
      await this.auditTrail.record(transaction, audit.context, {
        action: audit.action,
        targetType: 'module',
        targetIds: [moduleId],
        summary: { role, user_ids: ids.map(Number), ...fields },
      });
      if (changesMembers(result.change)) {
        await this.changeEvents.record(transaction, [
          { type: 'module.members_changed', data: result.change },
        ]);
      }
      return result.count;
    });
  }

  /** 404 naming the first unknown user in request order; the known ones stay locked against deletion. */
  private async requireUsers(ids: string[], transaction: Transaction): Promise<void> {
    // A JSON number just under 2^63 arrives rounded to 2^63, which is no bigint and so no user.
    const inRange = ids.filter((id) => BigInt(id) <= INT64_MAX);
    const existing = await this.users.lockExisting(inRange, transaction);
    const unknown = ids.find((id) => !existing.has(id));
    if (unknown !== undefined) throw new UserDoesNotExist(unknown);
  }
}
