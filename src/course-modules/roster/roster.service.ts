import { Injectable, type StreamableFile } from '@nestjs/common';
import { Transactions } from '../../database/transactions.js';
import { type RequestContext } from '../../audit/audit-actions.js';
import { AuditService } from '../../audit/audit.service.js';
import { type AuthUser } from '../../core/decorators.js';
import { type CsvRow } from '../../csv/csv-reader.js';
import { ImportHasErrors } from '../../csv/csv.errors.js';
import { csvDownload } from '../../csv/csv-writer.js';
import { type MembersChanged } from '../../events/change-event-types.js';
import { ChangeEventsService } from '../../events/change-events.service.js';
import { AppError, PermissionDenied } from '../../core/errors.js';
import { type UserListParams } from '../membership/member-list-params.js';
import { canViewPersonnel, type ModuleViewer } from '../modules/module-access.js';
import { ModuleNotFound } from '../modules/module.errors.js';
import { ModuleRole } from '../modules/module-role.js';
import { MembershipStatus } from '../membership/membership-status.js';
import {
  concludedStatus,
  type OnRemove,
  planRosterImport,
  type RosterColumn,
  type RosterImportResult,
  type RosterMode,
  type RosterOptionalColumn,
  userKey,
} from './roster-import.js';
import { changeOf, membersChange } from '../membership/membership-changes.js';
import { UserBulkRepository } from '../../users/user-bulk.repository.js';
import { MemberListsRepository } from '../membership/member-lists.repository.js';
import { ModuleRolesRepository } from '../membership/module-roles.repository.js';

export const ROSTER_EXPORT_COLUMNS = [
  'user_id',
  'username',
  'email',
  'role',
  'status',
  'starts_at',
  'ends_at',
  'effective_status',
] as const;

class SyncLimitExceeded extends AppError {
  constructor(count: number, limit: number) {
    super(409, `Sync would remove ${count} members; the limit is ${limit}`);
  }
}

/** Thrown inside the transaction to roll back a dry run after it has answered. */
class DryRunDone extends Error {
  constructor(readonly result: RosterImportResult) {
    super('dry run');
  }
}

export interface RosterImportOptions {
  mode: RosterMode;
  onRemove: OnRemove;
  maxRemovals: number | undefined;
  dryRun: boolean;
}

/** `POST /api/modules/{id}/roster/import` and `GET /api/modules/{id}/roster.csv` (docs/api.md §9). */
@Injectable()
export class RosterService {
  constructor(
    private readonly transactions: Transactions,
    private readonly roles: ModuleRolesRepository,
    private readonly lists: MemberListsRepository,
    private readonly users: UserBulkRepository,
    private readonly audit: AuditService,
    private readonly changeEvents: ChangeEventsService,
  ) {}

  /**
   * Before the file is read (docs/api.md §1 check order): the module exists (404) and the caller may change its
   * personnel (403), so that nobody without access makes the service parse up to 5 MiB. The import checks both
   * again under its lock.
   */
  async assertMayImport(moduleId: string, caller: AuthUser): Promise<void> {
    const role = await this.roles.callerRole(moduleId, caller.id);
    if (role === undefined) throw new ModuleNotFound();
    if (!caller.admin && role !== ModuleRole.Lecturer) throw new PermissionDenied();
  }

  /**
   * In one transaction: the module exists (404), the caller may change personnel (403), every row is decided
   * against the locked roster; then (unless a dry run, a row error (422) or too many removals (409)) the roles
   * are written with one audit event.
   */
  async import(
    moduleId: string,
    caller: AuthUser,
    rows: readonly CsvRow<RosterColumn>[],
    columns: ReadonlySet<RosterOptionalColumn>,
    options: RosterImportOptions,
    context: RequestContext,
  ): Promise<RosterImportResult> {
    try {
      return await this.transactions.runLong(async (manager) => {
        const role = await this.roles.callerRole(moduleId, caller.id, { lock: true, manager });
        if (role === undefined) throw new ModuleNotFound();
        const viewer: ModuleViewer = { admin: caller.admin, role };
        if (!viewer.admin && viewer.role !== ModuleRole.Lecturer) throw new PermissionDenied();
        const members = (await this.roles.lockMembers(moduleId, manager)).map((member) => ({
          ...member,
          id: Number(member.id),
        }));
        const users = await this.users.lockByNames(
          rows.map((row) => userKey(row.cells.user)),
          manager,
        );
        const { result, writes, limit } = planRosterImport({
          rows,
          users,
          members,
          viewer,
          mode: options.mode,
          onRemove: options.onRemove,
          columns,
          maxRemovals: options.maxRemovals,
          dryRun: options.dryRun,
        });
        if (result.errors > 0) throw new ImportHasErrors(result);
        if (options.dryRun) throw new DryRunDone(result);
        if (result.exceeds_limit) throw new SyncLimitExceeded(result.removed.length, limit);
        const removeIds = result.removed.map((member) => member.user_id);
        if (writes.length === 0 && removeIds.length === 0) return result;
        // A Lecturer caller never changes a Lecturer, not even one an admin committed since the members were read.
        const keepLecturers = !viewer.admin;
        const written = await this.roles.writeMemberships(moduleId, writes, manager, keepLecturers);
        const concluded = concludedStatus(options.onRemove);
        if (concluded === undefined) await this.roles.removeMembers(moduleId, removeIds, manager);
        else await this.roles.conclude(moduleId, removeIds, concluded, manager);
        const writtenIds = writes.map((write) => Number(write.userId));
        if (keepLecturers && (await this.roles.countLecturers(moduleId, writtenIds, manager)) > 0)
          throw new PermissionDenied();
        await this.audit.record(manager, context, {
          action: 'roster.import',
          targetType: 'module',
          targetIds: [moduleId],
          summary: {
            mode: options.mode,
            ...(options.mode === 'sync' ? { on_remove: options.onRemove } : {}),
            assigned: result.assigned,
            changed: result.changed,
            unchanged: result.unchanged,
            removed: removeIds.length,
          },
        });
        const held = new Map(
          members.map((member) => [String(member.id), { ...member, userId: String(member.id) }]),
        );
        const change: MembersChanged =
          written.length > 0 ? changeOf(moduleId, held, writes, written) : membersChange(moduleId);
        if (concluded === undefined) {
          change.removed = result.removed.map((member) => ({ user_id: member.user_id, role: member.role }));
        } else if (removeIds.length > 0) {
          change.status_changed ??= [];
          for (const member of result.removed)
            change.status_changed.push({
              user_id: member.user_id,
              from: MembershipStatus.Active,
              to: concluded,
            });
        }
        await this.changeEvents.record(manager, [{ type: 'module.members_changed', data: change }]);
        return result;
      });
    } catch (error) {
      if (error instanceof DryRunDone) return error.result;
      throw error;
    }
  }

  /** Every member matching the personnel list's filters and sort, as a streamed CSV file. */
  async export(moduleId: string, caller: AuthUser, params: UserListParams): Promise<StreamableFile> {
    const role = await this.roles.callerRole(moduleId, caller.id);
    if (role === undefined) throw new ModuleNotFound();
    if (!canViewPersonnel({ admin: caller.admin, role })) throw new PermissionDenied();
    const rows = await this.lists.streamPersonnel({ ...params, moduleId });
    return csvDownload(rows, ROSTER_EXPORT_COLUMNS, `module-${moduleId}-roster.csv`);
  }
}
