import { type QueryReader } from '../core/query.js';
import { type UserListFilter } from './users.repository.js';

/** The filters of `GET /api/users` and its CSV export, read in this order: `query`, `username`, `email`, `admin`. */
export function readUserFilters(reader: QueryReader): Omit<UserListFilter, 'sort' | 'paging'> {
  return {
    query: reader.string('query'),
    username: reader.string('username'),
    email: reader.string('email'),
    admin: reader.boolean('admin'),
  };
}
