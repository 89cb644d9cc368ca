import { type Paging, parseSort, type Query, QueryReader, type SortKey } from '../../core/query.js';
import { type EffectiveStatus } from './effective-status.js';

/**
 * The module lists' parameters: what a client may filter and sort by, read from the query string. The statements
 * that use them are module-reads.repository.ts'; a module's user lists have theirs in
 * membership/member-list-params.ts.
 */

/** Sort fields of `GET /api/modules` and the SQL expression each sorts by (a whitelist: nothing else is SQL). */
export const MODULE_SORT_FIELDS = {
  code: 'm.code',
  created_at: 'm.created_at',
  year: 'm.year',
  credits: 'm.credits',
  description: 'm.description',
} as const;

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
