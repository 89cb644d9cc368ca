import { type Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { type AppConfig } from '../../config/app-config.js';
import { type SortKey } from '../../core/query.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { exportBounds, streamRows } from '../../database/query-stream.js';
import {
  containsPattern,
  isoTimestampText,
  orderByClause,
  type Page,
  pageWithTotal,
  type PageRow,
  SqlParams,
  type SqlQuery,
  splitPage,
  whereClause,
} from '../../database/sql.js';
import { type UserSummarySource } from '../../users/user.mapper.js';
import { USER_SEARCH_TEXT } from '../../users/user-list.repository.js';
import { USER_SUMMARY_COLUMNS } from '../../users/users.repository.js';
import {
  DEFAULT_USER_SORT,
  type ModuleUserListFilter,
  type PersonnelFilter,
  USER_SORT_FIELDS,
} from './member-list-params.js';
import { type ModuleRole } from '../modules/module-role.js';
import { effectiveStatusOf } from '../modules/effective-status.js';
import { type MembershipSource } from './membership-status.js';
import { UserModuleRole } from './user-module-role.entity.js';

/*
 * The SQL of this repository, built from validated input only (sort expressions come from the whitelists of
 * member-list-params.ts, values are parameters). docs/sql/member-lists.repository.md shows every statement.
 */

/**
 * A text filter of the module's user lists: the username or the email contains it, case-insensitively
 * (`lower(col) LIKE lower(pattern)`, ILIKE's answers), narrowed first by the users' trigram index
 * (`USER_SEARCH_TEXT`, as the user list), so a rare text reads its few users instead of every user.
 */
function userTextCondition(params: SqlParams, text: string | undefined): string[] {
  if (!text) return [];
  const pattern = `lower(${params.add(containsPattern(text))})`;
  return [
    `${USER_SEARCH_TEXT} LIKE ${pattern}`,
    `(lower(u.username) LIKE ${pattern} OR lower(u.email) LIKE ${pattern})`,
  ];
}

/** The user lists' order: the requested keys or `username`, then the id. */
function userOrder(sort: readonly SortKey[]): string {
  return orderByClause(sort.length > 0 ? sort : DEFAULT_USER_SORT, 'u.id');
}

/**
 * The personnel lists' order, over the role rows where it can be: `username` is the row's `username_key`
 * (`lower(username)` of its user, kept by triggers: migration MemberListsAtScale) and the id its `user_id`, so
 * the default order is that of the indexes on (module_id, username_key, user_id) and (module_id, role,
 * username_key, user_id) and a page reads its own rows only.
 */
function personnelOrder(sort: readonly SortKey[]): string {
  const keys = (sort.length > 0 ? sort : DEFAULT_USER_SORT).map((key) =>
    key.column === USER_SORT_FIELDS.username ? { ...key, column: 'r.username_key' } : key,
  );
  return orderByClause(keys, 'r.user_id');
}

/**
 * The personnel filters over `user_module_roles r` (`JOIN users u` for the text): the module, the role, the
 * status, the text; and the placeholders of the module and the role.
 */
function personnelConditions(
  params: SqlParams,
  filter: PersonnelFilter,
): { conditions: string[]; moduleId: string; role?: string } {
  const moduleId = params.add(filter.moduleId);
  const conditions = [`r.module_id = ${moduleId}`];
  const role = filter.role ? params.add(filter.role) : undefined;
  if (role) conditions.push(`r.role = ${role}`);
  if (filter.status) conditions.push(`${effectiveStatusOf('r')} = ${params.add(filter.status)}`);
  conditions.push(...userTextCondition(params, filter.query));
  return { conditions, moduleId, role };
}

/** A membership's lifecycle columns (docs/api.md §15), aliased to MembershipSource's names. */
const MEMBERSHIP_COLUMNS = `r.status AS "memberStatus", r.starts_at AS "startsAt", r.ends_at AS "endsAt",
         ${effectiveStatusOf('r')} AS "effectiveStatus"`;

/** The personnel lists' rows: the role rows with their users. */
const PERSONNEL_FROM = 'FROM user_module_roles r JOIN users u ON u.id = r.user_id';

/**
 * Role holders of a module (optionally one role, one effective status), as User summaries plus the membership:
 * one page and the total in one statement, as `pageWithTotal` builds it. Without a status or a text the total is
 * read from `module_member_counts` (one row per role); with a status only it counts the role rows alone (every
 * role row has its user: the foreign key); with a text, the rows joined to their users.
 */
export function personnelListQuery(
  filter: ModuleUserListFilter & Pick<PersonnelFilter, 'role' | 'status'>,
): SqlQuery {
  const params = new SqlParams();
  const { conditions, moduleId, role } = personnelConditions(params, filter);
  const where = whereClause(conditions);
  const kept = [`c.module_id = ${moduleId}`, ...(role ? [`c.role = ${role}`] : [])];
  let total = `SELECT coalesce(sum(c.members), 0) AS n FROM module_member_counts c ${whereClause(kept)}`;
  if (filter.query) total = `SELECT count(*) AS n ${PERSONNEL_FROM} ${where}`;
  else if (filter.status) total = `SELECT count(*) AS n FROM user_module_roles r ${where}`;
  const sql = `SELECT total.n AS total, page.*
  FROM (${total}) total
  LEFT JOIN LATERAL (
    SELECT ${USER_SUMMARY_COLUMNS}, r.role, ${MEMBERSHIP_COLUMNS}
    ${PERSONNEL_FROM}
    ${where}
    ORDER BY ${personnelOrder(filter.sort)}
    LIMIT ${params.add(filter.paging.perPage)} OFFSET ${params.add(filter.paging.offset)}
  ) page ON true`;
  return { sql, params: params.values };
}

/** Every role holder the personnel list would show, unpaged, as the roster export's columns. */
export function personnelExportQuery(filter: PersonnelFilter): SqlQuery {
  const params = new SqlParams();
  const sql = `SELECT u.id AS user_id, u.username, u.email, r.role, r.status,
         ${isoTimestampText('r.starts_at')} AS starts_at, ${isoTimestampText('r.ends_at')} AS ends_at,
         ${effectiveStatusOf('r')} AS effective_status
       ${PERSONNEL_FROM}
       ${whereClause(personnelConditions(params, filter).conditions)} ORDER BY ${personnelOrder(filter.sort)}`;
  return { sql, params: params.values };
}

/** Users holding no role in the module. */
export function eligibleUsersQuery(filter: ModuleUserListFilter): SqlQuery {
  const params = new SqlParams();
  const conditions = [
    // Inactive users are left out (docs/api.md §14).
    'u.active',
    `NOT EXISTS (SELECT 1 FROM user_module_roles r WHERE r.user_id = u.id AND r.module_id = ${params.add(filter.moduleId)})`,
    ...userTextCondition(params, filter.query),
  ];
  const sql = pageWithTotal(
    params,
    'FROM users u',
    whereClause(conditions),
    USER_SUMMARY_COLUMNS,
    userOrder(filter.sort),
    filter.paging,
  );
  return { sql, params: params.values };
}

/** A user with the role held in a module and the membership's lifecycle. */
type MemberRow = UserSummarySource & { role: ModuleRole } & MembershipSource;

/** A module's people lists: its personnel (paged, or streamed for the roster export) and the users eligible. */
@Injectable()
export class MemberListsRepository {
  constructor(
    @InjectRepository(UserModuleRole) private readonly roles: Repository<UserModuleRole>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}
  /** Role holders of a module (optionally one role): one page and the total, in one statement. */
  async personnelPage(
    filter: ModuleUserListFilter & Pick<PersonnelFilter, 'role' | 'status'>,
  ): Promise<Page<MemberRow>> {
    const { sql, params } = personnelListQuery(filter);
    return splitPage(await this.roles.query<PageRow<MemberRow>[]>(sql, params));
  }

  /** Every role holder matching the personnel list's filters, in its order, streamed from a cursor. */
  async streamPersonnel(filter: PersonnelFilter): Promise<Readable> {
    const { sql, params } = personnelExportQuery(filter);
    return streamRows(this.roles.manager.connection, sql, params, exportBounds(this.config));
  }

  /** Users holding no role in the module: one page and the total, in one statement. */
  async eligiblePage(filter: ModuleUserListFilter): Promise<Page<UserSummarySource>> {
    const { sql, params } = eligibleUsersQuery(filter);
    return splitPage(await this.roles.query<PageRow<UserSummarySource>[]>(sql, params));
  }
}
