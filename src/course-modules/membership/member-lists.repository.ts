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
import { USER_SUMMARY_COLUMNS } from '../../users/users.repository.js';
import { DEFAULT_USER_SORT, type ModuleUserListFilter, type PersonnelFilter } from './member-list-params.js';
import { type ModuleRole } from '../modules/module-role.js';
import { effectiveStatusOf } from '../modules/effective-status.js';
import { type MembershipSource } from './membership-status.js';
import { UserModuleRole } from './user-module-role.entity.js';

/*
 * The SQL of this repository, built from validated input only (sort expressions come from the whitelists of
 * member-list-params.ts, values are parameters). docs/sql/member-lists.repository.md shows every statement.
 */

function userTextCondition(params: SqlParams, text: string | undefined): string[] {
  if (!text) return [];
  const pattern = params.add(containsPattern(text));
  return [`(u.username ILIKE ${pattern} OR u.email ILIKE ${pattern})`];
}

/** The user lists' order: the requested keys or `username`, then the id. */
function userOrder(sort: readonly SortKey[]): string {
  return orderByClause(sort.length > 0 ? sort : DEFAULT_USER_SORT, 'u.id');
}

/** The personnel filters over `user_module_roles r JOIN users u`: the module, the role, the status, the text. */
function personnelConditions(params: SqlParams, filter: PersonnelFilter): string[] {
  const conditions = [`r.module_id = ${params.add(filter.moduleId)}`];
  if (filter.role) conditions.push(`r.role = ${params.add(filter.role)}`);
  if (filter.status) conditions.push(`${effectiveStatusOf('r')} = ${params.add(filter.status)}`);
  conditions.push(...userTextCondition(params, filter.query));
  return conditions;
}

/** A membership's lifecycle columns (docs/api.md §15), aliased to MembershipSource's names. */
const MEMBERSHIP_COLUMNS = `r.status AS "memberStatus", r.starts_at AS "startsAt", r.ends_at AS "endsAt",
         ${effectiveStatusOf('r')} AS "effectiveStatus"`;

/** Role holders of a module (optionally one role, one effective status), as User summaries plus the membership. */
export function personnelListQuery(
  filter: ModuleUserListFilter & Pick<PersonnelFilter, 'role' | 'status'>,
): SqlQuery {
  const params = new SqlParams();
  const sql = pageWithTotal(
    params,
    'FROM user_module_roles r JOIN users u ON u.id = r.user_id',
    whereClause(personnelConditions(params, filter)),
    `${USER_SUMMARY_COLUMNS}, r.role, ${MEMBERSHIP_COLUMNS}`,
    userOrder(filter.sort),
    filter.paging,
  );
  return { sql, params: params.values };
}

/** Every role holder the personnel list would show, unpaged, as the roster export's columns. */
export function personnelExportQuery(filter: PersonnelFilter): SqlQuery {
  const params = new SqlParams();
  const sql = `SELECT u.id AS user_id, u.username, u.email, r.role, r.status,
         ${isoTimestampText('r.starts_at')} AS starts_at, ${isoTimestampText('r.ends_at')} AS ends_at,
         ${effectiveStatusOf('r')} AS effective_status
       FROM user_module_roles r JOIN users u ON u.id = r.user_id
       ${whereClause(personnelConditions(params, filter))} ORDER BY ${userOrder(filter.sort)}`;
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
