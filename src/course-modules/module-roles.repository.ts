import { type Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, Repository } from 'typeorm';
import { preparedQuery } from '../database/prepared.js';
import { type AppConfig } from '../config/app-config.js';
import { type SortKey } from '../core/query.js';
import { APP_CONFIG } from '../config/config.module.js';
import { exportBounds, streamRows } from '../database/query-stream.js';
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
} from '../database/sql.js';
import { type UserSummarySource } from '../users/user.mapper.js';
import { USER_SUMMARY_COLUMNS } from '../users/users.repository.js';
import { DEFAULT_USER_SORT, type ModuleUserListFilter, type PersonnelFilter } from './list-params.js';
import { type PersonnelJson } from './module.mapper.js';
import { type ModuleRole } from './module-role.js';
import { type Member } from './roster-import.js';
import { UserModuleRole } from './user-module-role.entity.js';

/*
 * The SQL of this repository, built from validated input only (sort expressions come from the whitelists of
 * list-params.ts, values are parameters). docs/sql/module-roles.repository.md shows every statement.
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

/** The personnel filters over `user_module_roles r JOIN users u`: the module, the role, the text. */
function personnelConditions(params: SqlParams, filter: PersonnelFilter): string[] {
  const conditions = [`r.module_id = ${params.add(filter.moduleId)}`];
  if (filter.role) conditions.push(`r.role = ${params.add(filter.role)}`);
  conditions.push(...userTextCondition(params, filter.query));
  return conditions;
}

/** Role holders of a module (optionally one role), as User summaries plus `role`. */
export function personnelListQuery(filter: ModuleUserListFilter & { role?: ModuleRole }): SqlQuery {
  const params = new SqlParams();
  const sql = pageWithTotal(
    params,
    'FROM user_module_roles r JOIN users u ON u.id = r.user_id',
    whereClause(personnelConditions(params, filter)),
    `${USER_SUMMARY_COLUMNS}, r.role`,
    userOrder(filter.sort),
    filter.paging,
  );
  return { sql, params: params.values };
}

/** Every role holder the personnel list would show, unpaged, as the roster export's columns. */
export function personnelExportQuery(filter: PersonnelFilter): SqlQuery {
  const params = new SqlParams();
  const sql = `SELECT u.id AS user_id, u.username, u.email, r.role
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

/**
 * A User summary (`toUserSummary`) as compact JSON text, byte for byte as `JSON.stringify` writes it (its keys
 * are USER_SUMMARY_FIELDS', module.mapper.spec.ts).
 */
export const USER_SUMMARY_JSON = `(SELECT row_to_json(x)::text FROM (
    SELECT u.id, u.username, u.email, u.given_name, u.family_name, u.display_name, u.active, u.admin,
           ${isoTimestampText('u.created_at')} AS created_at,
           ${isoTimestampText('u.updated_at')} AS updated_at,
           CASE WHEN u.avatar_key <> '' THEN '/api/users/' || u.id || '/avatar' END AS avatar_url) x)`;

/**
 * Everyone holding a role in the module whose id is `moduleId` (an SQL expression), for the single read, as the
 * JSON text of the four lists (comma-joined User summaries, ordered by username case-insensitively, then id) in
 * one row: built by PostgreSQL, since a module may have thousands of people. `when`, if given, is a condition
 * on the outer row: when false the lists are empty and no role row is read.
 */
export const personnelJsonOf = (moduleId: string, when?: string) => `SELECT
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'Lecturer'), '') AS lecturers,
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'AssistantLecturer'), '') AS assistants,
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'Tutor'), '') AS tutors,
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'Student'), '') AS students
  FROM (SELECT r.role, lower(u.username) AS lu, u.id, ${USER_SUMMARY_JSON} AS j
        FROM user_module_roles r JOIN users u ON u.id = r.user_id
        WHERE r.module_id = ${moduleId}${when ? ` AND ${when}` : ''}) people`;

const MODULE_PERSONNEL_JSON_SQL = personnelJsonOf('$1');

/** A role row written by a rollover: decimal ids. */
export interface CopiedMember {
  userId: string;
  moduleId: string;
  role: ModuleRole;
}

/** From and to module ids, in pairs (decimal strings); a null `to` is a module still to be created. */
interface ModulePairs {
  from: readonly string[];
  to: readonly (string | null)[];
}

/** The role rows of `roles` ($3) in each pair's `from` module ($1, $2): what a rollover copies (docs/api.md §13). */
const PAIR_ROLES = `
  FROM unnest($1::bigint[], $2::bigint[]) AS p(from_id, to_id)
  JOIN user_module_roles r ON r.module_id = p.from_id AND r.role = ANY($3::module_role[])`;

/** A user with the role held in a module. */
type MemberRow = UserSummarySource & { role: ModuleRole };

/** The only code that reads or writes `user_module_roles` (bar the cascade of a module delete). */
@Injectable()
export class ModuleRolesRepository {
  constructor(
    @InjectRepository(UserModuleRole) private readonly roles: Repository<UserModuleRole>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private run(manager?: EntityManager): EntityManager {
    return manager ?? this.roles.manager;
  }

  /**
   * The caller's role in the module (null when none), or undefined when there is no such module. `lock` keeps
   * the module from being deleted until the transaction ends.
   */
  async callerRole(
    moduleId: string,
    callerId: number,
    options: { lock?: boolean; manager?: EntityManager } = {},
  ): Promise<ModuleRole | null | undefined> {
    const rows = await this.run(options.manager).query<{ role: ModuleRole | null }[]>(
      `SELECT (SELECT r.role FROM user_module_roles r WHERE r.module_id = m.id AND r.user_id = $2) AS role
       FROM modules m WHERE m.id = $1 ${options.lock ? 'FOR KEY SHARE OF m' : ''}`,
      [moduleId, callerId],
    );
    return rows.length === 0 ? undefined : rows[0].role;
  }

  /** Role holders of a module (optionally one role): one page and the total, in one statement. */
  async personnelPage(filter: ModuleUserListFilter & { role?: ModuleRole }): Promise<Page<MemberRow>> {
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

  /** Everyone holding a role in the module, by username (case-insensitive), as JSON text for the single read. */
  async holdersJson(moduleId: string): Promise<PersonnelJson> {
    const [row] = await preparedQuery<PersonnelJson>(
      this.roles.manager.connection,
      MODULE_PERSONNEL_JSON_SQL,
      [moduleId],
    );
    return row;
  }

  /** Every member with their role, locked until commit. */
  lockMembers(moduleId: string, manager: EntityManager): Promise<Member[]> {
    return manager.query<Member[]>(
      `SELECT u.id, u.username, r.role FROM user_module_roles r JOIN users u ON u.id = r.user_id
       WHERE r.module_id = $1 ORDER BY lower(u.username), u.id FOR UPDATE OF r`,
      [moduleId],
    );
  }

  /** The named users holding a role other than `role` in the module, with it, locked in user id order. */
  async lockOtherRoles(
    moduleId: string,
    userIds: readonly string[],
    role: ModuleRole,
    manager: EntityManager,
  ): Promise<{ userId: string; role: ModuleRole }[]> {
    const rows = await manager.query<{ user_id: string; role: ModuleRole }[]>(
      `SELECT user_id::text AS user_id, role FROM user_module_roles
       WHERE module_id = $1 AND user_id = ANY($2::bigint[]) AND role <> $3
       ORDER BY user_id FOR UPDATE`,
      [moduleId, userIds, role],
    );
    return rows.map((row) => ({ userId: row.user_id, role: row.role }));
  }

  /**
   * Gives each named user `role` in the module, replacing another role there, in one statement. Returns the
   * users whose row was written (not those who held `role` already), in id order. With `keepLecturers` a
   * Lecturer row is never replaced, not even one another transaction committed after the caller's checks: the
   * caller then finds it with {@link lockOtherRoles} and refuses.
   */
  async assign(
    moduleId: string,
    userIds: readonly string[],
    role: ModuleRole,
    manager: EntityManager,
    keepLecturers = false,
  ): Promise<string[]> {
    const rows = await manager.query<{ user_id: string }[]>(
      `INSERT INTO user_module_roles (user_id, module_id, role)
       SELECT id, $1, $3 FROM unnest($2::bigint[]) AS named(id)
       ON CONFLICT (user_id, module_id) DO UPDATE SET role = EXCLUDED.role
       WHERE user_module_roles.role <> EXCLUDED.role
         AND NOT ($4::boolean AND user_module_roles.role = 'Lecturer')
       RETURNING user_id::text AS user_id`,
      [moduleId, userIds, role, keepLecturers],
    );
    return rows.map((row) => row.user_id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  }

  /** How many of the named users hold the Lecturer role in the module. */
  async countLecturers(
    moduleId: string,
    userIds: readonly number[],
    manager: EntityManager,
  ): Promise<number> {
    const [{ n }] = await manager.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM user_module_roles
       WHERE module_id = $1 AND user_id = ANY($2::bigint[]) AND role = 'Lecturer'`,
      [moduleId, userIds],
    );
    return n;
  }

  /** Takes `role` away from the named users who hold it; the number of rows removed. */
  async remove(
    moduleId: string,
    userIds: readonly string[],
    role: ModuleRole,
    manager: EntityManager,
  ): Promise<number> {
    const [, removed] = await manager.query<[unknown[], number]>(
      `DELETE FROM user_module_roles WHERE module_id = $1 AND user_id = ANY($2::bigint[]) AND role = $3`,
      [moduleId, userIds, role],
    );
    return removed;
  }

  /**
   * Copies into each pair's `to` module the role rows of `roles` its `from` module has and whose user holds no
   * role there yet, in one statement; returns the rows written. "No role there yet" is the primary key's
   * `ON CONFLICT DO NOTHING`, one index probe per row (an anti join here was planned as a scan of each user's
   * roles). The users are locked against deletion first: one deleted by a transaction that commits meanwhile is
   * skipped instead of failing the foreign key check.
   */
  copyMembers(
    pairs: ModulePairs,
    roles: readonly ModuleRole[],
    manager: EntityManager,
  ): Promise<CopiedMember[]> {
    return manager.query<CopiedMember[]>(
      `INSERT INTO user_module_roles (user_id, module_id, role)
       SELECT r.user_id, p.to_id, r.role ${PAIR_ROLES}
       JOIN users u ON u.id = r.user_id
       ORDER BY p.to_id, r.user_id
       FOR KEY SHARE OF u
       ON CONFLICT (user_id, module_id) DO NOTHING
       RETURNING user_id::text AS "userId", module_id::text AS "moduleId", role`,
      [pairs.from, pairs.to, roles],
    );
  }

  /**
   * How many role rows {@link copyMembers} would copy, by `from` module id (modules with none left out): those
   * whose user holds no role in the `to` module (none when it is null, a module still to create).
   */
  async countMembersToCopy(
    pairs: ModulePairs,
    roles: readonly ModuleRole[],
    manager: EntityManager,
  ): Promise<Map<string, number>> {
    const rows = await manager.query<{ fromId: string; n: number }[]>(
      `SELECT p.from_id::text AS "fromId", count(*)::int AS n ${PAIR_ROLES}
       WHERE NOT EXISTS (SELECT 1 FROM user_module_roles h WHERE h.user_id = r.user_id AND h.module_id = p.to_id)
       GROUP BY p.from_id`,
      [pairs.from, pairs.to, roles],
    );
    return new Map(rows.map((row) => [row.fromId, row.n]));
  }

  /**
   * Gives each user its role (replacing another) and removes `removeIds`, in `manager`'s transaction. With
   * `keepLecturers`, as in {@link assign}: a Lecturer row committed meanwhile is left as it is.
   */
  async applyRoster(
    moduleId: string,
    writes: readonly { userId: number; role: ModuleRole }[],
    removeIds: readonly number[],
    manager: EntityManager,
    keepLecturers = false,
  ): Promise<void> {
    if (writes.length > 0) {
      await manager.query(
        `INSERT INTO user_module_roles (user_id, module_id, role)
         SELECT id, $1, role FROM unnest($2::bigint[], $3::module_role[]) AS named(id, role)
         ON CONFLICT (user_id, module_id) DO UPDATE SET role = EXCLUDED.role
         WHERE NOT ($4::boolean AND user_module_roles.role = 'Lecturer')`,
        [moduleId, writes.map((write) => write.userId), writes.map((write) => write.role), keepLecturers],
      );
    }
    if (removeIds.length > 0) {
      await manager.query(
        `DELETE FROM user_module_roles WHERE module_id = $1 AND user_id = ANY($2::bigint[])`,
        [moduleId, removeIds],
      );
    }
  }
}
