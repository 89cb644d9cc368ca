import { type Paging, parseSort, type Query, QueryReader, type SortKey } from '../core/query.js';

/** Sort fields of `GET /api/users` and its CSV export; usernames sort case-insensitively (emails are stored lower-case). */
export const USER_LIST_SORT_FIELDS = {
  username: 'lower(u.username)',
  email: 'u.email',
  created_at: 'u.created_at',
  admin: 'u.admin',
} as const;

/** The filters, order and page of `GET /api/users` (UserListRepository.page). */
export interface UserListFilter {
  /** Username, email, a name or external_id contains this text. */
  query?: string;
  username?: string;
  email?: string;
  admin?: boolean;
  active?: boolean;
  sort: SortKey[];
  paging: Paging;
}

/**
 * The filters of `GET /api/users` and its CSV export, read in this order: `query`, `username`, `email`, `admin`,
 * `active`.
 */
function readUserFilters(reader: QueryReader): Omit<UserListFilter, 'sort' | 'paging'> {
  return {
    query: reader.string('query'),
    username: reader.string('username'),
    email: reader.string('email'),
    admin: reader.boolean('admin'),
    active: reader.boolean('active'),
  };
}

/** `GET /api/users`: the filters, `page` and `per_page`, then `sort` (whose 400 is reported alone). */
export function readUserListParams(query: Query): UserListFilter {
  const reader = new QueryReader(query);
  const filters = readUserFilters(reader);
  const paging = reader.paging();
  reader.done();
  return { ...filters, sort: parseSort(query.sort, USER_LIST_SORT_FIELDS), paging };
}

/** `GET /api/users/export.csv`: the list's filters and sort, no paging. */
export function readUserExportParams(query: Query): Omit<UserListFilter, 'paging'> {
  const reader = new QueryReader(query);
  const filters = readUserFilters(reader);
  reader.done();
  return { ...filters, sort: parseSort(query.sort, USER_LIST_SORT_FIELDS) };
}
