import { Injectable } from '@nestjs/common';
import { type RequestContext } from '../../audit/audit-actions.js';
import { AuditService } from '../../audit/audit.service.js';
import { type AuthUser } from '../../core/decorators.js';
import { InternalFailure, PermissionDenied } from '../../core/errors.js';
import { type JsonText } from '../../core/json-text.js';
import { ChangeEventsService } from '../../events/change-events.service.js';
import { isStatementError, violatedUniqueConstraint } from '../../database/sql.js';
import { Transactions } from '../../database/transactions.js';
import { UsersService } from '../../users/users.service.js';
import { bulkDeleteResult, type BulkDeleteResult, candidateIds } from './bulk-delete.js';
import { type PerField } from '../../core/wire-shape.js';
import {
  CODE_YEAR_CONSTRAINT,
  CourseModulesRepository,
  type ModuleValues,
} from './course-modules.repository.js';
import { ModuleReadsRepository } from './module-reads.repository.js';
import { type ModuleInput } from './dto/module-body.dto.js';
import { canReadModule } from './module-access.js';
import { DuplicateModule, ModuleNotFound } from './module.errors.js';
import { ModuleFiles } from './module-files.js';
import { type ModuleListFilter } from './list-params.js';
import {
  type ModuleList,
  moduleListJson,
  type ModuleWithPersonnel,
  moduleWithPersonnelJson,
  type ModuleWithRole,
  type MyModules,
  myModulesJson,
  type PersonnelJson,
  toModuleResponse,
} from './module.mapper.js';
import { type ModuleResponse } from './module.shape.js';
import { type ModuleRole } from './module-role.js';
import { type EffectiveStatus } from './effective-status.js';
import { ModuleTotals, totalsKey } from './module-totals.js';
import { AnswerBudget } from '../../core/answer-budget.js';

export const PERSONNEL_FAILURE_MESSAGE = 'Failed to retrieve assigned personnel';

/** The module the single read found, if `viewer` may read it: else 404 (none) or 403. */
function readable<T extends { callerRole: ModuleRole | null }>(module: T | null, viewer: AuthUser): T {
  if (!module) throw new ModuleNotFound();
  if (!canReadModule({ admin: viewer.admin, role: module.callerRole })) throw new PermissionDenied();
  return module;
}

const isCodeYearClash = (error: unknown) => violatedUniqueConstraint(error) === CODE_YEAR_CONSTRAINT;

const valuesOf = (input: ModuleInput): ModuleValues => ({
  code: input.code,
  year: input.year,
  description: input.description ?? null,
  credits: input.credits,
});

/** Every field a module's write sets, checked against `ModuleValues` when the project compiles. */
const MODULE_VALUE_FIELDS = Object.keys({
  code: true,
  year: true,
  description: true,
  credits: true,
} as const satisfies PerField<ModuleValues, true>) as (keyof ModuleValues)[];

/** The fields an update changed, as `{field: {from, to}}`. */
function changedFields(
  before: ModuleValues,
  after: ModuleValues,
): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of MODULE_VALUE_FIELDS) {
    if (before[field] !== after[field]) changes[field] = { from: before[field], to: after[field] };
  }
  return changes;
}

/**
 * Above this many role rows a module's single read takes its share of the answer budget first: about 1 MB held
 * per read below it (HELD_BYTES_PER_ROLE_ROW), which needs no bound of its own.
 */
export const LARGE_READ_ROLE_ROWS = 1000;

/**
 * What a read holds per person at its peak: a person's JSON is about 270 bytes, held as the driver's buffer, as
 * the row's string and as the answer's bytes (docs/decisions.md, "Large answers").
 */
const HELD_BYTES_PER_ROLE_ROW = 900;

@Injectable()
export class CourseModulesService {
  constructor(
    private readonly modules: CourseModulesRepository,
    private readonly reads: ModuleReadsRepository,
    private readonly users: UsersService,
    private readonly transactions: Transactions,
    private readonly files: ModuleFiles,
    private readonly totals: ModuleTotals,
    private readonly audit: AuditService,
    private readonly changeEvents: ChangeEventsService,
    private readonly budget: AnswerBudget,
  ) {}

  /**
   * Admins see every module; others only those where they hold an effective `active` or `completed` role
   * (decided in the SQL, docs/api.md §15). An admin list's
   * total comes from `module_stats` or from this process's {@link ModuleTotals}, counted again only after a
   * write to `modules`.
   */
  async list(viewer: AuthUser, filter: Omit<ModuleListFilter, 'memberId'>): Promise<JsonText<ModuleList>> {
    const memberId = viewer.admin ? undefined : viewer.id;
    // Field by field, not spread: two object spreads of the filter were 4–5 µs of this route's CPU per request in
    // a profile (docs/performance.md, sixth round).
    const key = totalsKey({ memberId, query: filter.query, code: filter.code, year: filter.year });
    const known = key === undefined ? undefined : this.totals.get(key);
    const { modulesJson, total, version } = await this.reads.page({
      memberId,
      query: filter.query,
      code: filter.code,
      year: filter.year,
      sort: filter.sort,
      paging: filter.paging,
      knownVersion: known?.version,
    });
    if (key !== undefined && total !== null && version !== undefined)
      this.totals.set(key, { version, total });
    return moduleListJson(modulesJson, filter.paging, total ?? known?.total ?? 0);
  }

  /** `GET /api/modules/me`: the caller's modules whose membership has the effective status `status`. */
  async mine(userId: number, status: EffectiveStatus = 'active'): Promise<JsonText<MyModules>> {
    return myModulesJson(await this.reads.ofMemberJson(userId, status));
  }

  /** `GET /api/users/{id}/modules`: 404 for an unknown user, else every module with the user's role in it. */
  async ofUser(userId: string): Promise<ModuleWithRole[]> {
    await this.users.requireUser(userId);
    const rows = await this.reads.ofMember(userId);
    return rows.map((row) => ({ ...toModuleResponse(row), role: row.role }));
  }

  /**
   * Existence first (404 for everyone), then access (403), then the personnel, whose JSON PostgreSQL builds:
   * the body is the module's JSON with the four lists spliced in (ModuleWithPersonnel). One statement reads all
   * three; when PostgreSQL rejects it, the two reads run apart to tell which part failed, since a failing
   * personnel read has a message of its own. When the database could not run it at all (unreachable, timed
   * out), the module read failed: a second attempt would only wait again.
   */
  async read(moduleId: string, viewer: AuthUser): Promise<JsonText<ModuleWithPersonnel>> {
    let found;
    try {
      found = await this.reads.withCallerRoleAndPersonnel(
        moduleId,
        viewer.id,
        viewer.admin,
        LARGE_READ_ROLE_ROWS,
      );
    } catch (error) {
      if (!isStatementError(error)) throw error;
      return this.readApart(moduleId, viewer);
    }
    const row = readable(found, viewer);
    if (row.roleRows <= LARGE_READ_ROLE_ROWS) return moduleWithPersonnelJson(row.module, row);
    return this.readLarge(moduleId, viewer, row.roleRows);
  }

  /**
   * A module of more than LARGE_READ_ROLE_ROWS people, read again once the answer budget holds its estimated
   * size, which goes back when the answer has been sent (docs/decisions.md, "Large answers").
   */
  private async readLarge(
    moduleId: string,
    viewer: AuthUser,
    roleRows: number,
  ): Promise<JsonText<ModuleWithPersonnel>> {
    const giveBack = await this.budget.take(roleRows * HELD_BYTES_PER_ROLE_ROW);
    try {
      let found;
      try {
        found = await this.reads.withCallerRoleAndPersonnel(moduleId, viewer.id, viewer.admin);
      } catch (error) {
        if (!isStatementError(error)) throw error;
        return (await this.readApart(moduleId, viewer)).whenSent(giveBack);
      }
      const row = readable(found, viewer);
      return moduleWithPersonnelJson(row.module, row).whenSent(giveBack);
    } catch (error) {
      giveBack();
      throw error;
    }
  }

  /** `read` in two statements: the module and the caller's role, then the personnel. */
  private async readApart(moduleId: string, viewer: AuthUser): Promise<JsonText<ModuleWithPersonnel>> {
    const module = readable(await this.reads.withCallerRole(moduleId, viewer.id), viewer);
    let people: PersonnelJson;
    try {
      people = await this.reads.holdersJson(moduleId);
    } catch (error) {
      throw new InternalFailure(PERSONNEL_FAILURE_MESSAGE, error);
    }
    return moduleWithPersonnelJson(JSON.stringify(toModuleResponse(module)), people);
  }

  async create(input: ModuleInput, context: RequestContext): Promise<ModuleResponse> {
    const values = valuesOf(input);
    try {
      return await this.transactions.run(async (transaction) => {
        const created = await this.modules.insert(values, transaction);
        await this.audit.record(transaction, context, {
          action: 'module.create',
          targetType: 'module',
          targetIds: [created.id],
          summary: { ...values },
        });
        const response = toModuleResponse(created);
        await this.changeEvents.record(transaction, [{ type: 'module.created', data: response }]);
        return response;
      });
    } catch (error) {
      throw isCodeYearClash(error) ? new DuplicateModule() : error;
    }
  }

  /** Replaces the whole module (an omitted description becomes null) and bumps `updated_at`. */
  async update(moduleId: string, input: ModuleInput, context: RequestContext): Promise<ModuleResponse> {
    const values = valuesOf(input);
    try {
      return await this.transactions.run(async (transaction) => {
        const before = await this.modules.lockValues(moduleId, transaction);
        if (!before) throw new ModuleNotFound();
        const updated = await this.modules.replace(moduleId, values, transaction);
        if (!updated) throw new ModuleNotFound();
        await this.audit.record(transaction, context, {
          action: 'module.update',
          targetType: 'module',
          targetIds: [moduleId],
          summary: changedFields(before, values),
        });
        const response = toModuleResponse(updated);
        await this.changeEvents.record(transaction, [{ type: 'module.updated', data: response }]);
        return response;
      });
    } catch (error) {
      throw isCodeYearClash(error) ? new DuplicateModule() : error;
    }
  }

  async remove(moduleId: string, context: RequestContext): Promise<void> {
    const deleted = await this.deleteModules([moduleId], 'module.delete', context);
    if (deleted.size === 0) throw new ModuleNotFound();
  }

  async bulkRemove(ids: readonly number[], context: RequestContext): Promise<BulkDeleteResult> {
    const candidates = candidateIds(ids);
    const deleted =
      candidates.length > 0
        ? await this.deleteModules(candidates, 'module.bulk_delete', context)
        : new Set<string>();
    return bulkDeleteResult(ids, deleted);
  }

  /**
   * Deletes the modules that exist among `ids` (exact decimal strings) with everything that belongs to them in
   * one transaction, then their files. Returns the ids deleted.
   */
  private async deleteModules(
    ids: readonly string[],
    action: 'module.delete' | 'module.bulk_delete',
    context: RequestContext,
  ): Promise<Set<string>> {
    const deleted = await this.transactions.run(async (transaction) => {
      const result = await this.modules.deleteWithDependents(ids, transaction);
      if (result.ids.length > 0) {
        await this.audit.record(transaction, context, {
          action,
          targetType: 'module',
          targetIds: result.ids,
          summary: { modules: result.modules },
        });
        await this.changeEvents.record(
          transaction,
          result.ids.map((id, index) => ({
            type: 'module.deleted',
            data: { id: Number(id), code: result.modules[index].code, year: result.modules[index].year },
          })),
        );
      }
      return result;
    });
    await this.files.removeDeleted(deleted.ids, deleted.storageKeys);
    return new Set(deleted.ids);
  }
}
