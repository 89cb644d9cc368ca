import { type Paging, parseSort, type Query, QueryReader, type SortKey } from '../core/query.js';
import { INVALID_ROLE_MESSAGE, type ModuleRole, parseModuleRole } from './module-role.js';

/**
 * The Modules API's list parameters: what a client may filter and sort by, read from the query string. The
 * statements that use them are the repositories' (course-modules.repository.ts, module-roles.repository.ts).
 */

/** Sort fields of `GET /api/modules` and the SQL expression each sorts by (a whitelist: nothing else is SQL). */
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

/** The default order of a module's user lists (`username`), before the id tie-break. */
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

/** A list of users seen from one module: its personnel (optionally one role), or the users eligible for it. */
export interface ModuleUserListFilter {
  moduleId: string;
  query?: string;
  sort: SortKey[];
  paging: Paging;
}

/** The personnel list's filters and order, without paging (the roster export). */
export type PersonnelFilter = Omit<ModuleUserListFilter, 'paging'> & { role?: ModuleRole };

/** `GET /api/modules`: page, per_page, query, code, year, then sort. */
export function readModuleListParams(query: Query): Omit<ModuleListFilter, 'memberId'> {
  const reader = new QueryReader(query);
  const paging = reader.paging();
  const text = reader.string('query');
  const code = reader.string('code');
  const year = reader.int('year');
  reader.done();
  const sort = parseSort(query.sort, MODULE_SORT_FIELDS);
  return { paging, query: text, code, year, sort };
}

export type UserListParams = Omit<ModuleUserListFilter, 'moduleId'> & { role?: ModuleRole };

/** Personnel, eligible and student lists: page, per_page, role (when `withRole`), query, then sort. */
export function readUserListParams(query: Query, withRole: boolean): UserListParams {
  const reader = new QueryReader(query);
  const paging = reader.paging();
  const rawRole = withRole ? reader.string('role') : undefined;
  const role = rawRole === undefined ? undefined : parseModuleRole(rawRole);
  if (rawRole !== undefined && role === undefined) reader.invalid(INVALID_ROLE_MESSAGE);
  const text = reader.string('query');
  reader.done();
  const sort = parseSort(query.sort, USER_SORT_FIELDS);
  return { paging, role, query: text, sort };
}
