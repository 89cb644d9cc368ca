import { parseSort, type Query, QueryReader } from '../core/query.js';
import { containsPattern, orderByClause } from '../database/sql.js';

/** Sort fields of the user list; usernames sort case-insensitively (emails are stored lower-case). */
export const USER_LIST_SORT_FIELDS = {
  username: 'lower(u.username)',
  email: 'u.email',
  created_at: 'u.created_at',
  admin: 'u.admin',
} as const;

/** The filters and order of `GET /api/users` as SQL over `users u`, with its parameters. */
export interface UserListFilter {
  where: string;
  orderBy: string;
  params: unknown[];
}

/** Reads `query`, `username`, `email`, `admin` and `sort` (paging is the caller's) into SQL parts. */
export function readUserListFilter(query: Query, reader = new QueryReader(query)): UserListFilter {
  const text = reader.string('query');
  const username = reader.string('username');
  const email = reader.string('email');
  const admin = reader.boolean('admin');
  reader.done();
  const orderBy = orderByClause(parseSort(query.sort, USER_LIST_SORT_FIELDS), 'u.id');
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const conditions: string[] = [];
  if (text !== undefined) {
    const pattern = param(containsPattern(text));
    conditions.push(`(u.username ILIKE ${pattern} OR u.email ILIKE ${pattern})`);
  }
  if (username !== undefined) conditions.push(`u.username ILIKE ${param(containsPattern(username))}`);
  if (email !== undefined) conditions.push(`u.email ILIKE ${param(containsPattern(email))}`);
  if (admin !== undefined) conditions.push(`u.admin = ${param(admin)}`);
  return { where: conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '', orderBy, params };
}
