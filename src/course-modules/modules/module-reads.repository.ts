import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { preparedQuery } from '../../database/prepared.js';
import {
  containsPattern,
  orderByClause,
  type PageRow,
  SqlParams,
  type SqlQuery,
  whereClause,
} from '../../database/sql.js';
import { USER_SUMMARY_JSON } from '../../users/user-summary-json.js';
import { CourseModule } from './course-module.entity.js';
import { MODULE_COLUMNS, moduleJson } from './course-modules.repository.js';
import { type ModuleListFilter } from './list-params.js';
import { type ModuleSource, type MyModulesJson, type PersonnelJson } from './module.mapper.js';
import { type ModuleRole } from './module-role.js';
import { effectiveStatusOf, type EffectiveStatus, grantsRead, grantsRights } from './effective-status.js';

/*
 * The SQL of this repository, built from validated input only (sort expressions come from the whitelists of
 * list-params.ts, values are parameters). Each paged list returns the page and the total in one statement
 * (`pageWithTotal`). The read paths build the Module's JSON text in PostgreSQL and run as named prepared
 * statements (docs/decisions.md); docs/sql/modules.md shows their plans, docs/sql/module-reads.repository.md
 * every statement.
 */

/**
 * The page's Module JSON texts joined by commas, in the page's order (the aggregate reads the sorted, limited
 * subquery as it comes), so the driver parses one row instead of a row per module.
 */
const pageItems = (where: string, orderBy: string, limit: string, offset: string) => `CROSS JOIN LATERAL (
    SELECT coalesce(string_agg(${moduleJson('p')}, ','), '') AS items
    FROM (
      SELECT ${MODULE_COLUMNS}
      FROM modules m
      ${where}
      ORDER BY ${orderBy}
      LIMIT ${limit} OFFSET ${offset}
    ) p
  ) page`;

/** Most list shapes (filters present, sort keys) whose statement text is kept (LIST_SQL). */
const MAX_LIST_SHAPES = 256;

/**
 * The statement text of each list shape, one string per shape, built the first time the shape is asked for:
 * `preparedQuery` looks a statement's name up by its text, and `pg` compares it with the text it prepared, so a
 * text built anew per request was flattened and hashed on every request (about 2 µs on the member list in a
 * profile, docs/performance.md); building it (the Module's JSON expression, the membership predicate, the
 * joins: a few kilobytes of strings) took 1.4–2 µs a request, which a kept shape no longer spends (ninth round).
 */
const LIST_SQL = new Map<string, string>();

/** The shape of a list: which filters are present and the sort keys; the statement's text depends on it alone. */
function listShape(filter: ModuleListFilter): string {
  let shape = `${filter.memberId === undefined ? '' : 'm'}${filter.query ? 'q' : ''}${filter.code ? 'c' : ''}${
    filter.year === undefined ? '' : 'y'
  }`;
  for (const key of filter.sort) shape += `,${key.descending ? '-' : '+'}${key.column}`;
  return shape;
}

/** The placeholders of a list statement's parameters (`$n`), undefined for a filter the shape does not have. */
interface ListPlaceholders {
  member?: string;
  query?: string;
  code?: string;
  year?: string;
  knownVersion?: string;
  limit: string;
  offset: string;
}

/** The text of a list shape's statement, for the placeholders `moduleListQuery` gave its parameters. */
function listSql(filter: ModuleListFilter, at: ListPlaceholders): string {
  const conditions: string[] = [];
  if (at.member !== undefined) {
    conditions.push(
      `EXISTS (SELECT 1 FROM user_module_roles r
               WHERE r.user_id = ${at.member} AND r.module_id = m.id AND ${grantsRead('r')})`,
    );
  }
  if (at.query !== undefined)
    conditions.push(
      `(lower(m.code) LIKE lower(${at.query}) OR lower(m.description) LIKE lower(${at.query}))`,
    );
  if (at.code !== undefined) conditions.push(`lower(m.code) LIKE lower(${at.code})`);
  if (at.year !== undefined) conditions.push(`m.year = ${at.year}`);
  const where = whereClause(conditions);
  const orderBy = orderByClause(filter.sort, 'm.id');
  if (at.member !== undefined) {
    return `SELECT total.n AS total, page.items
  FROM (SELECT count(*) AS n FROM modules m ${where}) total
  ${pageItems(where, orderBy, at.limit, at.offset)}`;
  }
  const total =
    at.knownVersion === undefined
      ? 's.total'
      : `CASE WHEN s.version = ${at.knownVersion} THEN NULL
              ELSE (SELECT count(*) FROM modules m ${where}) END`;
  return `SELECT s.version, ${total} AS total, page.items
  FROM module_stats s
  ${pageItems(where, orderBy, at.limit, at.offset)}`;
}

/**
 * One row: `total`, and `items`, the page's Module JSON texts joined by commas in the page's order.
 * The text filters are `lower(col) LIKE lower(pattern)`, which the trigram indexes on `lower(code)` and
 * `lower(description)` serve (migration ModuleSearchLower; ILIKE's answers, a cheaper recheck per row).
 * Non-admins: the page and the count of their own modules (a few rows each). Admins: the page, an index walk,
 * beside `module_stats`: the unfiltered total is its `total`; a filtered one is counted only when `version`
 * differs from `knownVersion` (the count is an uncorrelated subquery, evaluated only when CASE needs it), and
 * is null otherwise; the admin row carries `version`.
 * The parameters are numbered in the same order for every list of a shape, so the shape's text, built once
 * (LIST_SQL), serves every list of that shape.
 */
export function moduleListQuery(filter: ModuleListFilter): SqlQuery {
  const params = new SqlParams();
  const member = filter.memberId === undefined ? undefined : params.add(filter.memberId);
  const at: ListPlaceholders = {
    member,
    query: filter.query ? params.add(containsPattern(filter.query)) : undefined,
    code: filter.code ? params.add(containsPattern(filter.code)) : undefined,
    year: filter.year === undefined ? undefined : params.add(filter.year),
    limit: '',
    offset: '',
  };
  if (member === undefined && (at.query ?? at.code ?? at.year) !== undefined)
    at.knownVersion = params.add(filter.knownVersion ?? -1);
  at.limit = params.add(filter.paging.perPage);
  at.offset = params.add(filter.paging.offset);
  const shape = listShape(filter);
  let sql = LIST_SQL.get(shape);
  if (sql === undefined) {
    sql = listSql(filter, at);
    if (LIST_SQL.size < MAX_LIST_SHAPES) LIST_SQL.set(shape, sql);
  }
  return { sql, params: params.values };
}

/**
 * `GET /api/modules/me`: the caller's modules whose membership has the effective status $2 (docs/api.md §15), as
 * the JSON text of the four groups (comma-joined Modules, each group year descending, then code, then id), built
 * by PostgreSQL in one row.
 */
const MY_MODULES_JSON_SQL = `SELECT
    coalesce(string_agg(j, ',' ORDER BY year DESC, code, id) FILTER (WHERE role = 'Student'), '') AS as_student,
    coalesce(string_agg(j, ',' ORDER BY year DESC, code, id) FILTER (WHERE role = 'Tutor'), '') AS as_tutor,
    coalesce(string_agg(j, ',' ORDER BY year DESC, code, id) FILTER (WHERE role = 'Lecturer'), '') AS as_lecturer,
    coalesce(string_agg(j, ',' ORDER BY year DESC, code, id) FILTER (WHERE role = 'AssistantLecturer'), '')
      AS as_assistant_lecturer
  FROM (SELECT r.role, mine.year, mine.code, mine.id, ${moduleJson('mine')} AS j
        FROM user_module_roles r
        JOIN LATERAL (SELECT ${MODULE_COLUMNS} FROM modules m WHERE m.id = r.module_id) mine ON true
        WHERE r.user_id = $1 AND ${effectiveStatusOf('r')} = $2) groups`;

/** `GET /api/users/{id}/modules`: every module a user holds a role in, with the role, year descending. */
const USER_MODULES_WITH_ROLE_SQL = `SELECT r.role, ${MODULE_COLUMNS}
  FROM user_module_roles r
  JOIN modules m ON m.id = r.module_id
  WHERE r.user_id = $1
  ORDER BY m.year DESC, m.code ASC, m.id ASC`;

/**
 * The module and the caller's role in it when it lets them read the module (effective `active` or `completed`,
 * docs/api.md §15; else null): existence and access in one read.
 */
const MODULE_WITH_CALLER_ROLE_SQL = `SELECT ${MODULE_COLUMNS},
         (SELECT r.role FROM user_module_roles r
          WHERE r.module_id = m.id AND r.user_id = $2 AND ${grantsRead('r')}) AS "callerRole"
  FROM modules m
  WHERE m.id = $1`;

/**
 * Everyone holding an effective `active` role in the module whose id is `moduleId` (an SQL expression), for the
 * single read (docs/api.md §15), as the
 * JSON text of the four lists (comma-joined User summaries, ordered by username case-insensitively, then id) in
 * one row: built by PostgreSQL, since a module may have thousands of people. `when`, if given, is a condition
 * on the outer row: when false the lists are empty and no role row is read.
 */
const personnelJsonOf = (moduleId: string, when?: string) => `SELECT
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'Lecturer'), '') AS lecturers,
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'AssistantLecturer'), '') AS assistants,
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'Tutor'), '') AS tutors,
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'Student'), '') AS students
  FROM (SELECT r.role, lower(u.username) AS lu, u.id, ${USER_SUMMARY_JSON} AS j
        FROM user_module_roles r JOIN users u ON u.id = r.user_id
        WHERE r.module_id = ${moduleId} AND ${grantsRights('r')}${when ? ` AND ${when}` : ''}) people`;

const MODULE_PERSONNEL_JSON_SQL = personnelJsonOf('$1');

/**
 * The single read in one statement: the module as JSON text (`moduleJson`), the caller's role in it, its number
 * of role rows and its personnel lists, the lists read only when the caller may read the module (an admin, $3,
 * or holding a role in it: `canReadModule`) and the module has at most $4 role rows; otherwise they are empty
 * (the service answers 403, or reads a large module again within its memory budget). No row: no such module.
 */
const MODULE_READ_SQL = `SELECT ${moduleJson('m')} AS module, c.role AS "callerRole", size.n AS "roleRows",
         people.lecturers, people.assistants, people.tutors, people.students
  FROM (SELECT ${MODULE_COLUMNS} FROM modules m WHERE m.id = $1) m
  LEFT JOIN user_module_roles c ON c.module_id = m.id AND c.user_id = $2 AND ${grantsRead('c')}
  CROSS JOIN LATERAL (SELECT count(*)::int AS n FROM user_module_roles s WHERE s.module_id = m.id) size
  CROSS JOIN LATERAL (${personnelJsonOf('m.id', '($3 OR c.role IS NOT NULL) AND size.n <= $4')}) people`;

/**
 * The single read's row: the Module's JSON text, the caller's role in it, its number of role rows (every
 * status: at least the people listed), and the personnel lists.
 */
export type ModuleReadRow = {
  module: string;
  callerRole: ModuleRole | null;
  roleRows: number;
} & PersonnelJson;

/** The module reads: the list, a user's modules, the single read with its personnel lists. */
@Injectable()
export class ModuleReadsRepository {
  constructor(@InjectRepository(CourseModule) private readonly modules: Repository<CourseModule>) {}
  /**
   * One page of the list and the number of all matches, in one statement (a prepared one). For admins the
   * total is null when `knownVersion` is still `module_stats`' version (nothing was counted), and `version`
   * is that version. `modulesJson` is the page's Modules as JSON texts built by PostgreSQL, comma-joined in the
   * page's order (empty for an empty page).
   */
  async page(
    filter: ModuleListFilter,
  ): Promise<{ modulesJson: string; total: number | null; version?: number }> {
    const { sql, params } = moduleListQuery(filter);
    const rows = await preparedQuery<PageRow<{ items: string }> & { version?: number | string }>(
      this.modules.manager.connection,
      sql,
      params,
      // A text pattern runs unnamed, so PostgreSQL plans each search for its own pattern: a named statement goes
      // to a generic plan after five runs, and for `LIKE $1` that plan cannot tell a rare word from a common one.
      // For a rare word it walked the whole table in id order (445 ms instead of 1 ms on 100 000 modules,
      // docs/performance.md, ninth round).
      { name: filter.sort.length <= 1 && filter.query === undefined && filter.code === undefined },
    );
    const [row] = rows;
    return {
      modulesJson: row?.items ?? '',
      total: row === undefined ? 0 : row.total === null ? null : Number(row.total),
      version: row?.version === undefined ? undefined : Number(row.version),
    };
  }

  /**
   * `GET /api/modules/me`: the JSON text of the user's modules in each role group, in one row: those whose
   * membership's effective status is `status`.
   */
  async ofMemberJson(userId: number, status: EffectiveStatus): Promise<MyModulesJson> {
    const [row] = await preparedQuery<MyModulesJson>(this.modules.manager.connection, MY_MODULES_JSON_SQL, [
      userId,
      status,
    ]);
    return row;
  }

  /** Every module the user holds a role in, with the role: year descending, then code, then id. */
  ofMember(userId: number | string): Promise<(ModuleSource & { role: ModuleRole })[]> {
    return preparedQuery(this.modules.manager.connection, USER_MODULES_WITH_ROLE_SQL, [userId]);
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

  /**
   * The module's JSON text, the caller's role in it and, when the caller is an admin or holds a role in it, its
   * personnel lists (else empty ones): null when there is no such module. One statement for the single read.
   */
  async withCallerRoleAndPersonnel(
    moduleId: string,
    callerId: number,
    admin: boolean,
    maxRoleRows = 2_147_483_647,
  ): Promise<ModuleReadRow | null> {
    const [row] = await preparedQuery<ModuleReadRow>(this.modules.manager.connection, MODULE_READ_SQL, [
      moduleId,
      callerId,
      admin,
      maxRoleRows,
    ]);
    return row ?? null;
  }

  /** Everyone holding a role in the module, by username (case-insensitive), as JSON text for the single read. */
  async holdersJson(moduleId: string): Promise<PersonnelJson> {
    const [row] = await preparedQuery<PersonnelJson>(
      this.modules.manager.connection,
      MODULE_PERSONNEL_JSON_SQL,
      [moduleId],
    );
    return row;
  }
}
