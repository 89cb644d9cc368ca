import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
import { type AuthUser } from '../core/decorators.js';
import { InternalFailure, PermissionDenied } from '../core/errors.js';
import { JsonText } from '../core/json-text.js';
import { preparedQuery } from '../database/prepared.js';
import { bulkDeleteResult, type BulkDeleteResult, candidateIds } from './bulk-delete.js';
import { type ModuleInput } from './dto/module-body.dto.js';
import { canReadModule } from './module-access.js';
import { DuplicateModule, ModuleNotFound } from './module.errors.js';
import { ModuleFiles } from './module-files.js';
import {
  type ModuleResponse,
  type ModuleSource,
  type ModuleWithPersonnel,
  type MyModules,
  toModuleResponse,
  toMyModules,
} from './module.mapper.js';
import {
  MODULE_PERSONNEL_JSON_SQL,
  MODULE_WITH_CALLER_ROLE_SQL,
  type ModuleListFilter,
  moduleListQuery,
  MY_MODULES_SQL,
  type PageRow,
  type PersonnelJson,
} from './module-queries.js';
import { ModuleTotals, totalsKey } from './module-totals.js';
import { type ModuleRole } from './module-role.js';

export const PERSONNEL_FAILURE_MESSAGE = 'Failed to retrieve assigned personnel';

export interface ModuleList {
  modules: ModuleResponse[];
  page: number;
  per_page: number;
  total: number;
}

const UNIQUE_VIOLATION = '23505';
const CODE_YEAR_CONSTRAINT = 'uq_modules_code_year';

function isCodeYearClash(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const cause = error.driverError as { code?: string; constraint?: string };
  return cause.code === UNIQUE_VIOLATION && cause.constraint === CODE_YEAR_CONSTRAINT;
}

const MODULE_RETURNING = `RETURNING id, code, year, description, credits,
            created_at AS "createdAt", updated_at AS "updatedAt"`;

@Injectable()
export class CourseModulesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly files: ModuleFiles,
    private readonly totals: ModuleTotals,
  ) {}

  /**
   * Admins see every module; others only those where they hold a role (decided in the SQL). An admin list's
   * total comes from `module_stats` or from this process's {@link ModuleTotals}, counted again only after a
   * write to `modules`.
   */
  async list(viewer: AuthUser, filter: Omit<ModuleListFilter, 'memberId'>): Promise<ModuleList> {
    const memberId = viewer.admin ? undefined : viewer.id;
    const key = totalsKey({ ...filter, memberId });
    const known = key === undefined ? undefined : this.totals.get(key);
    const { sql, params } = moduleListQuery({ ...filter, memberId, knownVersion: known?.version });
    const rows = await preparedQuery<PageRow<ModuleSource & { version?: number }>>(
      this.dataSource,
      sql,
      params,
    );
    const counted = rows[0]?.total ?? null;
    if (key !== undefined && counted !== null)
      this.totals.set(key, { version: rows[0].version!, total: counted });
    const items = rows.filter((row) => row.id !== null);
    return {
      modules: items.map(toModuleResponse),
      page: filter.paging.page,
      per_page: filter.paging.perPage,
      total: counted ?? known?.total ?? 0,
    };
  }

  async mine(userId: number): Promise<MyModules> {
    const rows = await preparedQuery<ModuleSource & { role: ModuleRole }>(this.dataSource, MY_MODULES_SQL, [
      userId,
    ]);
    return toMyModules(rows);
  }

  /**
   * Existence first (404 for everyone), then access (403), then the personnel in a second query, whose JSON
   * PostgreSQL builds: the body is the module's JSON with the four lists spliced in (ModuleWithPersonnel).
   */
  async read(moduleId: string, viewer: AuthUser): Promise<JsonText<ModuleWithPersonnel>> {
    const [module] = await preparedQuery<ModuleSource & { callerRole: ModuleRole | null }>(
      this.dataSource,
      MODULE_WITH_CALLER_ROLE_SQL,
      [moduleId, viewer.id],
    );
    if (!module) throw new ModuleNotFound();
    if (!canReadModule({ admin: viewer.admin, role: module.callerRole })) throw new PermissionDenied();
    let people: PersonnelJson;
    try {
      [people] = await preparedQuery<PersonnelJson>(this.dataSource, MODULE_PERSONNEL_JSON_SQL, [moduleId]);
    } catch (error) {
      throw new InternalFailure(PERSONNEL_FAILURE_MESSAGE, error);
    }
    const head = JSON.stringify(toModuleResponse(module)).slice(0, -1);
    return new JsonText(
      `${head},"lecturers":[${people.lecturers}],"assistant_lecturers":[${people.assistants}],` +
        `"tutors":[${people.tutors}],"students":[${people.students}]}`,
    );
  }

  async create(input: ModuleInput): Promise<ModuleResponse> {
    try {
      const [row] = await this.dataSource.query<ModuleSource[]>(
        `INSERT INTO modules (code, year, description, credits) VALUES ($1, $2, $3, $4)
         ${MODULE_RETURNING}`,
        [input.code, input.year, input.description ?? null, input.credits],
      );
      return toModuleResponse(row);
    } catch (error) {
      throw isCodeYearClash(error) ? new DuplicateModule() : error;
    }
  }

  /** Replaces the whole module (an omitted description becomes null) and bumps `updated_at`. */
  async update(moduleId: string, input: ModuleInput): Promise<ModuleResponse> {
    let rows: ModuleSource[];
    try {
      // UPDATE … RETURNING comes back from TypeORM as [rows, affected].
      [rows] = await this.dataSource.query<[ModuleSource[], number]>(
        `UPDATE modules SET code = $2, year = $3, description = $4, credits = $5, updated_at = now()
         WHERE id = $1
         ${MODULE_RETURNING}`,
        [moduleId, input.code, input.year, input.description ?? null, input.credits],
      );
    } catch (error) {
      throw isCodeYearClash(error) ? new DuplicateModule() : error;
    }
    if (rows.length === 0) throw new ModuleNotFound();
    return toModuleResponse(rows[0]);
  }

  async remove(moduleId: string): Promise<void> {
    const deleted = await this.deleteModules([moduleId]);
    if (deleted.size === 0) throw new ModuleNotFound();
  }

  async bulkRemove(ids: readonly number[]): Promise<BulkDeleteResult> {
    const candidates = candidateIds(ids);
    const deleted = candidates.length > 0 ? await this.deleteModules(candidates) : new Set<string>();
    return bulkDeleteResult(ids, deleted);
  }

  /**
   * Deletes the modules that exist among `ids` (exact decimal strings) with everything that belongs to them:
   * one transaction, one statement per table whatever the number of ids; then their files. Returns the ids
   * deleted.
   */
  private async deleteModules(ids: readonly string[]): Promise<Set<string>> {
    const { deleted, storageKeys } = await this.dataSource.transaction(async (manager) => {
      // Locking in id order first keeps concurrent deletes of overlapping sets from deadlocking.
      const locked = await manager.query<{ id: string }[]>(
        `SELECT m.id::text AS id FROM modules m WHERE m.id = ANY($1::bigint[]) ORDER BY m.id FOR UPDATE`,
        [ids],
      );
      const found = locked.map((row) => row.id);
      if (found.length === 0) return { deleted: found, storageKeys: [] };
      const [files] = await manager.query<[{ key: string }[], number]>(
        `DELETE FROM assignment_files WHERE module_id = ANY($1::bigint[]) RETURNING storage_key AS key`,
        [found],
      );
      await manager.query(`DELETE FROM assignments WHERE module_id = ANY($1::bigint[])`, [found]);
      await manager.query(`DELETE FROM user_module_roles WHERE module_id = ANY($1::bigint[])`, [found]);
      await manager.query(`DELETE FROM modules WHERE id = ANY($1::bigint[])`, [found]);
      return { deleted: found, storageKeys: files.map((file) => file.key) };
    });
    await this.files.removeDeleted(deleted, storageKeys);
    return new Set(deleted);
  }
}
