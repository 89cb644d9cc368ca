import { parseSort, type Query, QueryReader } from '../core/query.js';
import { INVALID_ROLE_MESSAGE, type ModuleRole, parseModuleRole } from './module-role.js';
import {
  type ModuleListFilter,
  MODULE_SORT_FIELDS,
  type UserListFilter,
  USER_SORT_FIELDS,
} from './module-queries.js';

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

export type UserListParams = Omit<UserListFilter, 'moduleId'> & { role?: ModuleRole };

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
