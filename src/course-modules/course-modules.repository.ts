import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, Repository } from 'typeorm';
import { preparedQuery } from '../database/prepared.js';
import { type Page, type PageRow } from '../database/sql.js';
import { CourseModule } from './course-module.entity.js';
import {
  MODULE_WITH_CALLER_ROLE_SQL,
  type ModuleListFilter,
  moduleListQuery,
  MY_MODULES_JSON_SQL,
  MY_MODULES_SQL,
  type MyModulesJson,
} from './module-queries.js';
import { type ModuleSource } from './module.mapper.js';
import { type ModuleRole } from './module-role.js';

/** A module's stored values as written by create and replace. */
export interface ModuleValues {
  code: string;
  year: number;
  description: string | null;
  credits: number;
}

/** The modules deleted (decimal ids, with code and year) and the storage keys of their files. */
export interface DeletedModules {
  ids: string[];
  modules: { code: string; year: number }[];
  storageKeys: string[];
}

/** The unique constraint a create or replace violates when the code is taken for the year. */
export const CODE_YEAR_CONSTRAINT = 'uq_modules_code_year';

const MODULE_RETURNING = `RETURNING id, code, year, description, credits,
            created_at AS "createdAt", updated_at AS "updatedAt"`;

/** The only code that reads or writes the `modules` table (and deletes what belongs to a module). */
@Injectable()
export class CourseModulesRepository {
  constructor(@InjectRepository(CourseModule) private readonly modules: Repository<CourseModule>) {}

  private run(manager?: EntityManager): EntityManager {
    return manager ?? this.modules.manager;
  }

  /**
   * One page of the list and the number of all matches, in one statement (a prepared one). For admins the
   * total is null when `knownVersion` is still `module_stats`' version (nothing was counted), and `version`
   * is that version. Each item is the Module's JSON text, built by PostgreSQL.
   */
  async page(
    filter: ModuleListFilter,
  ): Promise<Omit<Page<string>, 'total'> & { total: number | null; version?: number }> {
    const { sql, params } = moduleListQuery(filter);
    const rows = await preparedQuery<PageRow<{ items: string }> & { version?: number | string }>(
      this.modules.manager.connection,
      sql,
      params,
      { name: filter.sort.length <= 1 },
    );
    const first = rows[0];
    return {
      // One row: the page's texts already joined (a single item, or none for an empty page).
      items: first === undefined || first.items === '' ? [] : [first.items],
      total: first === undefined ? 0 : first.total === null ? null : Number(first.total),
      version: first?.version === undefined ? undefined : Number(first.version),
    };
  }

  /** `GET /api/modules/me`: the JSON text of the user's modules in each role group, in one row. */
  async ofMemberJson(userId: number): Promise<MyModulesJson> {
    const [row] = await preparedQuery<MyModulesJson>(this.modules.manager.connection, MY_MODULES_JSON_SQL, [
      userId,
    ]);
    return row;
  }

  /** Every module the user holds a role in, with the role: year descending, then code, then id. */
  ofMember(userId: number | string): Promise<(ModuleSource & { role: ModuleRole })[]> {
    return preparedQuery(this.modules.manager.connection, MY_MODULES_SQL, [userId]);
  }

  /** The module and the caller's role in it (null when none), or null when there is no such module. */
  async withCallerRole(
    moduleId: string,
    callerId: number,
  ): Promise<(ModuleSource & { callerRole: ModuleRole | null }) | null> {
    const [row] = await preparedQuery<ModuleSource & { callerRole: ModuleRole | null }>(
      this.modules.manager.connection,
      MODULE_WITH_CALLER_ROLE_SQL,
      [moduleId, callerId],
    );
    return row ?? null;
  }

  /** Inserts a module; a taken code and year violates {@link CODE_YEAR_CONSTRAINT}. */
  async insert(values: ModuleValues, manager?: EntityManager): Promise<ModuleSource> {
    const [row] = await this.run(manager).query<ModuleSource[]>(
      `INSERT INTO modules (code, year, description, credits) VALUES ($1, $2, $3, $4)
       ${MODULE_RETURNING}`,
      [values.code, values.year, values.description, values.credits],
    );
    return row;
  }

  /** The module's values, locked until the caller's transaction ends; null when there is no such module. */
  async lockValues(moduleId: string, manager: EntityManager): Promise<ModuleValues | null> {
    const [row] = await manager.query<ModuleValues[]>(
      `SELECT code, year, description, credits FROM modules WHERE id = $1 FOR UPDATE`,
      [moduleId],
    );
    return row ?? null;
  }

  /** Replaces every field and bumps `updated_at`; null when there is no such module. */
  async replace(
    moduleId: string,
    values: ModuleValues,
    manager?: EntityManager,
  ): Promise<ModuleSource | null> {
    // UPDATE … RETURNING comes back from TypeORM as [rows, affected].
    const [rows] = await this.run(manager).query<[ModuleSource[], number]>(
      `UPDATE modules SET code = $2, year = $3, description = $4, credits = $5, updated_at = now()
       WHERE id = $1
       ${MODULE_RETURNING}`,
      [moduleId, values.code, values.year, values.description, values.credits],
    );
    return rows[0] ?? null;
  }

  /**
   * Deletes the modules that exist among `ids` (exact decimal strings) with everything that belongs to them,
   * inside the caller's transaction: one statement per table whatever the number of ids. The rows are locked
   * in id order first, so concurrent deletes of overlapping sets do not deadlock.
   */
  async deleteWithDependents(ids: readonly string[], manager: EntityManager): Promise<DeletedModules> {
    const locked = await manager.query<{ id: string; code: string; year: number }[]>(
      `SELECT m.id::text AS id, m.code, m.year FROM modules m WHERE m.id = ANY($1::bigint[])
       ORDER BY m.id FOR UPDATE`,
      [ids],
    );
    const found = locked.map((row) => row.id);
    const modules = locked.map(({ code, year }) => ({ code, year }));
    if (found.length === 0) return { ids: found, modules, storageKeys: [] };
    const [files] = await manager.query<[{ key: string }[], number]>(
      `DELETE FROM assignment_files WHERE module_id = ANY($1::bigint[]) RETURNING storage_key AS key`,
      [found],
    );
    await manager.query(`DELETE FROM assignments WHERE module_id = ANY($1::bigint[])`, [found]);
    await manager.query(`DELETE FROM user_module_roles WHERE module_id = ANY($1::bigint[])`, [found]);
    await manager.query(`DELETE FROM modules WHERE id = ANY($1::bigint[])`, [found]);
    return { ids: found, modules, storageKeys: files.map((file) => file.key) };
  }

  /**
   * Rollover (docs/api.md §13): the modules of `fromYear` (only those with a code in `codes` when given), at most
   * `limit` of them, in one statement. With `lock` they cannot be deleted until the transaction ends; locks are
   * taken in id order, as deletes take theirs.
   */
  rolloverSources(
    filter: { fromYear: number; codes: readonly string[] | undefined },
    limit: number,
    options: { lock: boolean; manager: EntityManager },
  ): Promise<{ id: string; code: string }[]> {
    return options.manager.query<{ id: string; code: string }[]>(
      `SELECT m.id::text AS id, m.code FROM modules m
       WHERE m.year = $1 AND ($2::text[] IS NULL OR m.code = ANY($2::text[]))
       ORDER BY m.id LIMIT $3
       ${options.lock ? 'FOR KEY SHARE' : ''}`,
      [filter.fromYear, filter.codes ?? null, limit],
    );
  }

  /**
   * The ids of the modules of `year` with a code among `codes`, by code, in one statement: one scan against the
   * array (hashed by PostgreSQL), never a join, whose plan could go quadratic on the statistics of a year that has
   * just been filled (docs/sql/modules.md).
   */
  async idsByCode(
    codes: readonly string[],
    year: number,
    manager: EntityManager,
  ): Promise<Map<string, string>> {
    const rows = await manager.query<{ id: string; code: string }[]>(
      `SELECT id::text AS id, code FROM modules WHERE year = $1 AND code = ANY($2::text[])`,
      [year, codes],
    );
    return new Map(rows.map((row) => [row.code, row.id]));
  }

  /**
   * Creates the `toYear` namesake (same code, description and credits) of each module among `sourceIds`, in one
   * statement; returns the modules created. A namesake that exists (created meanwhile by someone else) is skipped.
   */
  insertCopies(
    sourceIds: readonly string[],
    toYear: number,
    manager: EntityManager,
  ): Promise<ModuleSource[]> {
    return manager.query<ModuleSource[]>(
      `INSERT INTO modules (code, year, description, credits)
       SELECT s.code, $2, s.description, s.credits FROM modules s
       WHERE s.id = ANY($1::bigint[])
       ORDER BY s.code
       ON CONFLICT (code, year) DO NOTHING
       ${MODULE_RETURNING}`,
      [sourceIds, toYear],
    );
  }

  /** The existing modules among `ids` (decimal strings). */
  async existingIds(ids: readonly string[]): Promise<Set<string>> {
    const rows = await this.modules.query<{ id: string }[]>(
      `SELECT id::text AS id FROM modules WHERE id = ANY($1::bigint[])`,
      [ids],
    );
    return new Set(rows.map((row) => row.id));
  }
}
