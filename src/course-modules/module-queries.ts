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
}

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
  const sql = pageWithTotal(
    params,
    'FROM modules m',
    whereClause(conditions),
    MODULE_COLUMNS,
    orderByClause(filter.sort, 'm.id'),
    filter.paging,
  );
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

/** Role holders of a module (optionally one role), as User summaries plus `role`. */
export function personnelListQuery(filter: UserListFilter & { role?: ModuleRole }): SqlQuery {
  const params = new SqlParams();
  const conditions = [`r.module_id = ${params.add(filter.moduleId)}`];
  if (filter.role) conditions.push(`r.role = ${params.add(filter.role)}`);
  conditions.push(...userTextCondition(params, filter.query));
  const sql = pageWithTotal(
    params,
    'FROM user_module_roles r JOIN users u ON u.id = r.user_id',
    whereClause(conditions),
    `${USER_COLUMNS}, r.role`,
    orderByClause(filter.sort.length > 0 ? filter.sort : DEFAULT_USER_SORT, 'u.id'),
    filter.paging,
  );
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
    orderByClause(filter.sort.length > 0 ? filter.sort : DEFAULT_USER_SORT, 'u.id'),
    filter.paging,
  );
  return { sql, params: params.values };
}

/** `GET /api/modules/me`: every module the user holds a role in, with the role, in the order of each group. */
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

/** Everyone holding a role in the module, ordered by username (case-insensitive), for the single read. */
export const MODULE_PERSONNEL_SQL = `SELECT r.role, ${USER_COLUMNS}
  FROM user_module_roles r
  JOIN users u ON u.id = r.user_id
  WHERE r.module_id = $1
  ORDER BY lower(u.username) ASC, u.id ASC`;
