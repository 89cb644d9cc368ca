import { type Paging, type QueryReader, type SortKey } from '../core/query.js';

/** Sort fields of `GET /api/users` and its CSV export; usernames sort case-insensitively (emails are stored lower-case). */
export const USER_LIST_SORT_FIELDS = {
  username: 'lower(u.username)',
  email: 'u.email',
  created_at: 'u.created_at',
  admin: 'u.admin',
} as const;

/** The filters, order and page of `GET /api/users` (UsersRepository.page). */
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
export function readUserFilters(reader: QueryReader): Omit<UserListFilter, 'sort' | 'paging'> {
  return {
    query: reader.string('query'),
    username: reader.string('username'),
    email: reader.string('email'),
    admin: reader.boolean('admin'),
    active: reader.boolean('active'),
  };
}
