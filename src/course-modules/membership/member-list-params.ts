import { type Paging, parseSort, type Query, QueryReader, type SortKey } from '../../core/query.js';
import { EFFECTIVE_STATUSES, type EffectiveStatus } from '../modules/effective-status.js';
import { INVALID_ROLE_MESSAGE, type ModuleRole, parseModuleRole } from '../modules/module-role.js';
import { INVALID_LIST_STATUS_MESSAGE } from './membership-status.js';

/**
 * The parameters of a module's user lists (personnel, eligible users, students, the roster export): what a client
 * may filter and sort by, read from the query string. The statements that use them are member-lists.repository.ts'.
 */

/** Sort fields of the personnel, eligible and student lists; usernames sort case-insensitively. */
export const USER_SORT_FIELDS = {
  username: 'lower(u.username)',
  email: 'u.email',
  created_at: 'u.created_at',
} as const;

/** The default order of a module's user lists (`username`), before the id tie-break. */
export const DEFAULT_USER_SORT: SortKey[] = [{ column: USER_SORT_FIELDS.username, descending: false }];

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
