import { type Paging, parseSort, type Query, QueryReader, type SortKey } from '../../core/query.js';
import { INVALID_ROLE_MESSAGE, type ModuleRole, parseModuleRole } from './module-role.js';
import { EFFECTIVE_STATUSES, type EffectiveStatus } from './effective-status.js';
import { INVALID_LIST_STATUS_MESSAGE } from '../membership/membership-status.js';

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
  /** Set for non-admins: only modules where this user holds an effective `active` or `completed` role. */
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
export type PersonnelFilter = Omit<ModuleUserListFilter, 'paging'> & {
  role?: ModuleRole;
  /** Only memberships with this effective status (docs/api.md §15); undefined: all. */
  status?: EffectiveStatus;
};

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

export type UserListParams = Omit<ModuleUserListFilter, 'moduleId'> & {
  role?: ModuleRole;
  status?: EffectiveStatus;
};

/** `status` of the member lists: an effective status, or `all` (the default, read as undefined). */
function readStatusFilter(reader: QueryReader): EffectiveStatus | undefined {
  const raw = reader.string('status');
  if (raw === undefined || raw === 'all') return undefined;
  if (EFFECTIVE_STATUSES.includes(raw as EffectiveStatus)) return raw as EffectiveStatus;
  return reader.invalid(INVALID_LIST_STATUS_MESSAGE);
}

/**
 * Personnel, eligible and student lists: page, per_page, role (when `withRole`), status (when `withStatus`),
 * query, then sort.
 */
export function readUserListParams(query: Query, withRole: boolean, withStatus = false): UserListParams {
  const reader = new QueryReader(query);
  const paging = reader.paging();
  const rawRole = withRole ? reader.string('role') : undefined;
  const role = rawRole === undefined ? undefined : parseModuleRole(rawRole);
  if (rawRole !== undefined && role === undefined) reader.invalid(INVALID_ROLE_MESSAGE);
  const status = withStatus ? readStatusFilter(reader) : undefined;
  const text = reader.string('query');
  reader.done();
  const sort = parseSort(query.sort, USER_SORT_FIELDS);
  return { paging, role, status, query: text, sort };
}

export const INVALID_MY_STATUS_MESSAGE = 'status must be one of active, completed, upcoming';

/** The effective statuses `GET /api/modules/me` lists by (docs/api.md §15). */
export const MY_MODULE_STATUSES = [
  'active',
  'completed',
  'upcoming',
] as const satisfies readonly EffectiveStatus[];

/** `GET /api/modules/me`: `status`, `active` by default. */
export function readMyModulesStatus(query: Query): EffectiveStatus {
  const reader = new QueryReader(query);
  const raw = reader.string('status');
  const status =
    raw === undefined
      ? 'active'
      : (MY_MODULE_STATUSES.find((known) => known === raw) ?? reader.invalid(INVALID_MY_STATUS_MESSAGE));
  reader.done();
  return status!;
}
