import { type Paging, type SortKey } from '../core/query.js';
import {
  containsPattern,
  orderByClause,
  pageWithTotal,
  SqlParams,
  type SqlQuery,
  whereClause,
} from '../database/sql.js';
import { USER_COLUMNS } from '../users/user-row.js';
import { type ModuleRole } from './module-role.js';

/**
 * The SQL of the module repositories, built from validated input only (sort expressions come from a whitelist,
 * values are parameters). Each paged list returns the page and the total in one statement (`pageWithTotal`).
 * docs/sql/modules.md shows the plans.
 */
export const MODULE_COLUMNS = `m.id, m.code, m.year, m.description, m.credits,
         m.created_at AS "createdAt", m.updated_at AS "updatedAt"`;

/** `timestamptz` as `Date.prototype.toISOString()` writes it (milliseconds, `Z`). */
const isoText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The Module of `row` (a relation with MODULE_COLUMNS' names) as compact JSON text, byte for byte as
 * `JSON.stringify(toModuleResponse(row))` writes it. Lists compute it over their page only (outside the LIMIT),
 * so a sort over many matches never builds text for rows it drops.
 */
export const moduleJson = (row: string) => `(SELECT row_to_json(x)::text FROM (
    SELECT ${row}.id, ${row}.code, ${row}.year, ${row}.description, ${row}.credits,
           ${isoText(`${row}."createdAt"`)} AS created_at, ${isoText(`${row}."updatedAt"`)} AS updated_at) x)`;

/** Sort fields of `GET /api/modules` and their SQL. */
export const MODULE_SORT_FIELDS = {
  code: 'm.code',
  created_at: 'm.created_at',
  year: 'm.year',
  credits: 'm.credits',
  description: 'm.description',
} as const;

/** Sort fields of the personnel, eligible and student lists; usernames sort case-insensitively. */
export const USER_SORT_FIELDS = {
  username: 'lower(u.username)',
  email: 'u.email',
  created_at: 'u.created_at',
} as const;

/** The default order of user lists (`username`), before the id tie-break. */
export const DEFAULT_USER_SORT: SortKey[] = [{ column: USER_SORT_FIELDS.username, descending: false }];

export interface ModuleListFilter {
  /** Set for non-admins: only modules where this user holds a role. */
  memberId?: number;
  query?: string;
  code?: string;
  year?: number;
  sort: SortKey[];
  paging: Paging;
  /**
   * Admin lists: the `module_stats` version at which this filter's total is already known (see
   * module-totals.ts); the statement then counts nothing unless the version has moved.
   */
  knownVersion?: number;
}

/**
 * One row (`total`, and `items`: the page's Module JSON texts joined by commas in the page's order). Non-admins:
 * the page and the count of their own modules (a few rows each). Admins: the page, an index walk, beside
 * `module_stats`: the unfiltered total is its `total`; a filtered one is counted only when `version` differs
 * from `knownVersion` (the count is an uncorrelated subquery, evaluated only when CASE needs it), and is null
 * otherwise; the admin row carries `version`.
 */
export function moduleListQuery(filter: ModuleListFilter): SqlQuery {
  const params = new SqlParams();
  const conditions: string[] = [];
  if (filter.memberId !== undefined) {
    conditions.push(
      `EXISTS (SELECT 1 FROM user_module_roles r WHERE r.user_id = ${params.add(filter.memberId)} AND r.module_id = m.id)`,
    );
  }
  if (filter.query) {
    const pattern = params.add(containsPattern(filter.query));
    conditions.push(`(m.code ILIKE ${pattern} OR m.description ILIKE ${pattern})`);
  }
  if (filter.code) conditions.push(`m.code ILIKE ${params.add(containsPattern(filter.code))}`);
  if (filter.year !== undefined) conditions.push(`m.year = ${params.add(filter.year)}`);
  const where = whereClause(conditions);
  const orderBy = orderByClause(filter.sort, 'm.id');
  if (filter.memberId !== undefined) {
    // One row, as for admins below: the member's total and the page's JSON texts joined in the page's order.
    const sql = `SELECT total.n AS total, page.items
  FROM (SELECT count(*) AS n FROM modules m ${where}) total
  CROSS JOIN LATERAL (
    SELECT coalesce(string_agg(${moduleJson('p')}, ','), '') AS items
    FROM (
      SELECT ${MODULE_COLUMNS}
      FROM modules m
      ${where}
      ORDER BY ${orderBy}
      LIMIT ${params.add(filter.paging.perPage)} OFFSET ${params.add(filter.paging.offset)}
    ) p
  ) page`;
    return { sql, params: params.values };
  }
  const total =
    conditions.length === 0
      ? 's.total'
      : `CASE WHEN s.version = ${params.add(filter.knownVersion ?? -1)} THEN NULL
              ELSE (SELECT count(*) FROM modules m ${where}) END`;
  // One row: the page's JSON texts joined in the page's order (the aggregate reads the sorted subquery as it
  // comes), so the driver parses one row of three fields instead of a row per module.
  const sql = `SELECT s.version, ${total} AS total, page.items
  FROM module_stats s
  CROSS JOIN LATERAL (
    SELECT coalesce(string_agg(${moduleJson('p')}, ','), '') AS items
    FROM (
      SELECT ${MODULE_COLUMNS}
      FROM modules m
      ${where}
      ORDER BY ${orderBy}
      LIMIT ${params.add(filter.paging.perPage)} OFFSET ${params.add(filter.paging.offset)}
    ) p
  ) page`;
  return { sql, params: params.values };
}

export interface UserListFilter {
  moduleId: string;
  query?: string;
  sort: SortKey[];
  paging: Paging;
}

function userTextCondition(params: SqlParams, text: string | undefined): string[] {
  if (!text) return [];
  const pattern = params.add(containsPattern(text));
  return [`(u.username ILIKE ${pattern} OR u.email ILIKE ${pattern})`];
}

/** The user lists' order: the requested keys or `username`, then the id. */
function userOrder(sort: readonly SortKey[]): string {
  return orderByClause(sort.length > 0 ? sort : DEFAULT_USER_SORT, 'u.id');
}

/** The personnel filters over `user_module_roles r JOIN users u`: the module, the role, the text. */
function personnelConditions(params: SqlParams, filter: PersonnelFilter): string[] {
  const conditions = [`r.module_id = ${params.add(filter.moduleId)}`];
  if (filter.role) conditions.push(`r.role = ${params.add(filter.role)}`);
  conditions.push(...userTextCondition(params, filter.query));
  return conditions;
}

/** The personnel list's filters and order, without paging. */
export type PersonnelFilter = Omit<UserListFilter, 'paging'> & { role?: ModuleRole };

/** Role holders of a module (optionally one role), as User summaries plus `role`. */
export function personnelListQuery(filter: UserListFilter & { role?: ModuleRole }): SqlQuery {
  const params = new SqlParams();
  const sql = pageWithTotal(
    params,
    'FROM user_module_roles r JOIN users u ON u.id = r.user_id',
    whereClause(personnelConditions(params, filter)),
    `${USER_COLUMNS}, r.role`,
    userOrder(filter.sort),
    filter.paging,
  );
  return { sql, params: params.values };
}

/** Every role holder the personnel list would show, unpaged, as the roster export's columns. */
export function personnelExportQuery(filter: PersonnelFilter): SqlQuery {
  const params = new SqlParams();
  const sql = `SELECT u.id AS user_id, u.username, u.email, r.role
       FROM user_module_roles r JOIN users u ON u.id = r.user_id
       ${whereClause(personnelConditions(params, filter))} ORDER BY ${userOrder(filter.sort)}`;
  return { sql, params: params.values };
}

/** Users holding no role in the module. */
export function eligibleUsersQuery(filter: UserListFilter): SqlQuery {
  const params = new SqlParams();
  const conditions = [
    `NOT EXISTS (SELECT 1 FROM user_module_roles r WHERE r.user_id = u.id AND r.module_id = ${params.add(filter.moduleId)})`,
    ...userTextCondition(params, filter.query),
  ];
  const sql = pageWithTotal(
    params,
    'FROM users u',
    whereClause(conditions),
    USER_COLUMNS,
    userOrder(filter.sort),
    filter.paging,
  );
  return { sql, params: params.values };
}

/**
 * `GET /api/modules/me`: the user's modules as the JSON text of the four groups (comma-joined Modules, each
 * group year descending, then code, then id), built by PostgreSQL in one row.
 */
export const MY_MODULES_JSON_SQL = `SELECT
    coalesce(string_agg(j, ',' ORDER BY year DESC, code, id) FILTER (WHERE role = 'Student'), '') AS as_student,
    coalesce(string_agg(j, ',' ORDER BY year DESC, code, id) FILTER (WHERE role = 'Tutor'), '') AS as_tutor,
    coalesce(string_agg(j, ',' ORDER BY year DESC, code, id) FILTER (WHERE role = 'Lecturer'), '') AS as_lecturer,
    coalesce(string_agg(j, ',' ORDER BY year DESC, code, id) FILTER (WHERE role = 'AssistantLecturer'), '')
      AS as_assistant_lecturer
  FROM (SELECT r.role, mine.year, mine.code, mine.id, ${moduleJson('mine')} AS j
        FROM user_module_roles r
        JOIN LATERAL (SELECT ${MODULE_COLUMNS} FROM modules m WHERE m.id = r.module_id) mine ON true
        WHERE r.user_id = $1) groups`;

/** The row of {@link MY_MODULES_JSON_SQL}: each group's comma-joined Module JSON texts. */
export interface MyModulesJson {
  as_student: string;
  as_tutor: string;
  as_lecturer: string;
  as_assistant_lecturer: string;
}

/** `GET /api/users/{id}/modules`: every module the user holds a role in, with the role, year descending. */
export const MY_MODULES_SQL = `SELECT r.role, ${MODULE_COLUMNS}
  FROM user_module_roles r
  JOIN modules m ON m.id = r.module_id
  WHERE r.user_id = $1
  ORDER BY m.year DESC, m.code ASC, m.id ASC`;

/** The module and the caller's role in it (null when none): existence and access in one read. */
export const MODULE_WITH_CALLER_ROLE_SQL = `SELECT ${MODULE_COLUMNS},
         (SELECT r.role FROM user_module_roles r WHERE r.module_id = m.id AND r.user_id = $2) AS "callerRole"
  FROM modules m
  WHERE m.id = $1`;

/** A User summary (`toUserSummary`) as compact JSON text, byte for byte as `JSON.stringify` writes it. */
const USER_SUMMARY_JSON = `(SELECT row_to_json(x)::text FROM (
    SELECT u.id, u.username, u.email, u.admin, ${isoText('u.created_at')} AS created_at,
           ${isoText('u.updated_at')} AS updated_at,
           CASE WHEN u.avatar_key <> '' THEN '/api/users/' || u.id || '/avatar' END AS avatar_url) x)`;

/**
 * Everyone holding a role in the module for the single read, as the JSON text of the four lists (comma-joined
 * User summaries, ordered by username case-insensitively, then id): built by PostgreSQL, since a module may
 * have thousands of people.
 */
export const MODULE_PERSONNEL_JSON_SQL = `SELECT
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'Lecturer'), '') AS lecturers,
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'AssistantLecturer'), '') AS assistants,
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'Tutor'), '') AS tutors,
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'Student'), '') AS students
  FROM (SELECT r.role, lower(u.username) AS lu, u.id, ${USER_SUMMARY_JSON} AS j
        FROM user_module_roles r JOIN users u ON u.id = r.user_id
        WHERE r.module_id = $1) people`;

/** The row of {@link MODULE_PERSONNEL_JSON_SQL}. */
export interface PersonnelJson {
  lecturers: string;
  assistants: string;
  tutors: string;
  students: string;
}
