import { ValidationFailed } from '../core/errors.js';
import { parseSort, type Query, QueryReader } from '../core/query.js';
import { INVALID_ROLE_MESSAGE, type ModuleRole, parseModuleRole } from './module-role.js';
import {
  type ModuleListFilter,
  MODULE_SORT_FIELDS,
  type UserListFilter,
  USER_SORT_FIELDS,
} from './module-queries.js';

/** PostgreSQL text cannot hold U+0000: such a filter is the client's error, not a database failure. */
function nulProblem(name: string, value: string | undefined): string | undefined {
  return value?.includes('\u0000') ? `${name} must not contain NUL characters` : undefined;
}

/** The reader's messages and these, in that order, as one 400; sort is checked afterwards and alone. */
function finish(reader: QueryReader, more: (string | undefined)[]): void {
  const messages: string[] = [];
  try {
    reader.done();
  } catch (error) {
    if (!(error instanceof ValidationFailed)) throw error;
    messages.push(error.message);
  }
  for (const message of more) if (message) messages.push(message);
  if (messages.length > 0) throw new ValidationFailed(messages.join('; '));
}

/** `GET /api/modules`: page, per_page, query, code, year, then sort. */
export function readModuleListParams(query: Query): Omit<ModuleListFilter, 'memberId'> {
  const reader = new QueryReader(query);
  const paging = reader.paging();
  const text = reader.string('query');
  const code = reader.string('code');
  const year = reader.int('year');
  finish(reader, [nulProblem('query', text), nulProblem('code', code)]);
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
  const text = reader.string('query');
  finish(reader, [
    rawRole !== undefined && role === undefined ? INVALID_ROLE_MESSAGE : undefined,
    nulProblem('query', text),
  ]);
  const sort = parseSort(query.sort, USER_SORT_FIELDS);
  return { paging, role, query: text, sort };
}
