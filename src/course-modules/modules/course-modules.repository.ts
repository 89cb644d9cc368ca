import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, Repository } from 'typeorm';
import { returnedRow } from '../../database/returning.js';
import { type PerField } from '../../core/wire-shape.js';
import { aliasedColumns, isoTimestampText, rowJsonText } from '../../database/sql.js';
import { CourseModule } from './course-module.entity.js';
import { type ModuleSource } from './module.mapper.js';
import { MODULE_FIELDS, type ModuleResponse } from './module.shape.js';

/*
 * The SQL of this repository, built from validated input only (values are parameters): the writes of `modules`
 * and the rollover's reads and copies; the Module's columns and JSON text, which the reads
 * (module-reads.repository.ts) use too. docs/sql/course-modules.repository.md shows every statement.
 */

/**
 * The column of `modules` each property of a Module's source is read from: the one list MODULE_COLUMNS,
 * MODULE_PROPERTIES and MODULE_RETURNING are made from, checked against `ModuleSource` when the project compiles.
 */
const MODULE_COLUMN_NAMES = {
  id: 'id',
  code: 'code',
  year: 'year',
  description: 'description',
  credits: 'credits',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const satisfies PerField<ModuleSource, string>;

/** The columns of a Module, aliased to the entity's property names, so a row is a `ModuleSource` as it stands. */
export const MODULE_COLUMNS = aliasedColumns(
  Object.fromEntries(
    Object.entries(MODULE_COLUMN_NAMES).map(([property, column]) => [property, `m.${column}`]),
  ),
);

/**
 * Each field of the Module (module.shape.ts) as an SQL expression over `row`, a relation with MODULE_COLUMNS'
 * names: what `toModuleResponse` writes, as PostgreSQL writes it.
 */
const moduleJsonSql = (row: string) =>
  ({
    id: `${row}.id`,
    code: `${row}.code`,
    year: `${row}.year`,
    description: `${row}.description`,
    credits: `${row}.credits`,
    created_at: isoTimestampText(`${row}."createdAt"`),
    updated_at: isoTimestampText(`${row}."updatedAt"`),
  }) satisfies PerField<ModuleResponse, string>;

/**
 * The Module of `row` (a relation with MODULE_COLUMNS' names) as compact JSON text, byte for byte as
 * `JSON.stringify(toModuleResponse(row))` writes it. Lists compute it over their page only (outside the LIMIT),
 * so a sort over many matches never builds text for rows it drops.
 */
export const moduleJson = (row: string) => rowJsonText(MODULE_FIELDS, moduleJsonSql(row));

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

/** The Module's properties, as a QueryBuilder's `returning()` names them (MODULE_COLUMNS' order). */
const MODULE_PROPERTIES = Object.keys(MODULE_COLUMN_NAMES) as (keyof typeof MODULE_COLUMN_NAMES)[];

/** The same as `RETURNING` text, for the rollover's `INSERT … SELECT`. */
const MODULE_RETURNING = `RETURNING ${aliasedColumns(MODULE_COLUMN_NAMES)}`;

/**
 * The `modules` table's writes (create, replace, the deletes of what belongs to a module) and the rollover's
 * reads and copies; the module reads are ModuleReadsRepository's.
 */
@Injectable()
export class CourseModulesRepository {
  constructor(@InjectRepository(CourseModule) private readonly modules: Repository<CourseModule>) {}
  private run(manager?: EntityManager): EntityManager {
    return manager ?? this.modules.manager;
  }

  /** A Module's source from the row of a `returning(MODULE_PROPERTIES)`. */
  private source(row: Record<string, unknown>): ModuleSource {
    return returnedRow<CourseModule, (typeof MODULE_PROPERTIES)[number]>(
      this.modules.metadata,
      MODULE_PROPERTIES,
      row,
    );
  }

  /** Inserts a module; a taken code and year violates {@link CODE_YEAR_CONSTRAINT}. */
  async insert(values: ModuleValues, manager?: EntityManager): Promise<ModuleSource> {
    const result = await this.run(manager)
      .createQueryBuilder()
      .insert()
      .into(CourseModule)
      .values(values)
      .returning([...MODULE_PROPERTIES])
      .updateEntity(false)
      .execute();
    return this.source((result.raw as Record<string, unknown>[])[0]);
  }

  /** The module's values, locked until the caller's transaction ends; null when there is no such module. */
  lockValues(moduleId: string, manager: EntityManager): Promise<ModuleValues | null> {
    return manager.findOne(CourseModule, {
      select: { code: true, year: true, description: true, credits: true },
      // A path id is an exact decimal string, compared with `bigint` exactly (the entity types it a number).
      where: { id: moduleId as unknown as number },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /** Replaces every field and bumps `updated_at`; null when there is no such module. */
  async replace(
    moduleId: string,
    values: ModuleValues,
    manager?: EntityManager,
  ): Promise<ModuleSource | null> {
    // `updated_at` is the UpdateDateColumn: TypeORM sets it to CURRENT_TIMESTAMP (now()).
    const result = await this.run(manager)
      .createQueryBuilder()
      .update(CourseModule)
      .set(values)
      .where({ id: moduleId })
      .returning([...MODULE_PROPERTIES])
      .updateEntity(false)
      .execute();
    const [row] = result.raw as Record<string, unknown>[];
    return row === undefined ? null : this.source(row);
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
