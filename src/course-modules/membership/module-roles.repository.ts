import { type Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, Repository } from 'typeorm';
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
import { USER_SEARCH_TEXT, USER_SUMMARY_COLUMNS } from '../../users/users.repository.js';
import {
  DEFAULT_USER_SORT,
  type ModuleUserListFilter,
  type PersonnelFilter,
  USER_SORT_FIELDS,
} from './member-list-params.js';
import { type ModuleRole } from '../modules/module-role.js';
import { effectiveStatusOf, grantsRights } from '../modules/effective-status.js';
import {
  type HeldMembership,
  type Member,
  type MembershipSource,
  type MembershipStatus,
  type MembershipWrite,
} from './membership-status.js';
import { UserModuleRole } from './user-module-role.entity.js';
import { type ChangeEventType, type NewChangeEvent } from '../../events/change-event-types.js';
import { CHANGE_EVENTS_NOTIFY, copiedMembersEventRows } from '../../events/change-events.repository.js';

/*
 * The SQL of this repository, built from validated input only (sort expressions come from the whitelists of
 * member-list-params.ts, values are parameters). docs/sql/module-roles.repository.md shows every statement.
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

/** A role row written by a rollover: decimal ids. */
/** What a rollover's member copy wrote: role rows by target module id, and change events by type. */
export interface CopiedMembers {
  /** Target module id (decimal) → role rows copied into it (modules with none left out). */
  copied: Map<string, number>;
  events: Map<ChangeEventType, number>;
}

/** From and to module ids, in pairs (decimal strings); a null `to` is a module still to be created. */
interface ModulePairs {
  from: readonly string[];
  to: readonly (string | null)[];
}

/** The role rows `r` of each pair's `from` module ($1, $2); {@link COPIED_ROLE} says which of them are copied. */
const PAIR_ROLES = `
  FROM unnest($1::bigint[], $2::bigint[]) AS p(from_id, to_id)
  JOIN user_module_roles r ON r.module_id = p.from_id`;
/**
 * Which role rows `r` a rollover copies (docs/api.md §13, §15): those of `roles` ($3) that are effective `active`
 * at the call (they are written `active` with no dates). The copy and its count share it.
 */
const COPIED_ROLE = `r.role = ANY($3::module_role[]) AND ${grantsRights('r')}`;

/** A user with the role held in a module and the membership's lifecycle. */
type MemberRow = UserSummarySource & { role: ModuleRole } & MembershipSource;

/** Arbitrary, fixed (beside the migrations', the first administrator's and the job queue's): one time sweep at a time. */
const MEMBERSHIP_SWEEP_LOCK = 7_240_015;

/** The writes of `user_module_roles` and the people lists (module reads also join it: course-modules.repository.ts). */
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
   * The caller's role in the module when it grants rights (effective `active`, docs/api.md §15; null when none),
   * or undefined when there is no such module. `lock` keeps the module from being deleted until the transaction
   * ends.
   */
  async callerRole(
    moduleId: string,
    callerId: number,
    options: { lock?: boolean; manager?: EntityManager } = {},
  ): Promise<ModuleRole | null | undefined> {
    const rows = await this.run(options.manager).query<{ role: ModuleRole | null }[]>(
      `SELECT (SELECT r.role FROM user_module_roles r
               WHERE r.module_id = m.id AND r.user_id = $2 AND ${grantsRights('r')}) AS role
       FROM modules m WHERE m.id = $1 ${options.lock ? 'FOR KEY SHARE OF m' : ''}`,
      [moduleId, callerId],
    );
    return rows.length === 0 ? undefined : rows[0].role;
  }

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

  /** Every member with their role and membership, locked until commit. */
  lockMembers(moduleId: string, manager: EntityManager): Promise<Member[]> {
    return manager.query<Member[]>(
      `SELECT u.id, u.username, r.role, r.status, r.starts_at AS "startsAt", r.ends_at AS "endsAt"
       FROM user_module_roles r JOIN users u ON u.id = r.user_id
       WHERE r.module_id = $1 ORDER BY lower(u.username), u.id FOR UPDATE OF r`,
      [moduleId],
    );
  }

  /** The named users' memberships of the module (those who hold one), locked in user id order. */
  async lockHeld(
    moduleId: string,
    userIds: readonly string[],
    manager: EntityManager,
  ): Promise<HeldMembership[]> {
    return manager.query<HeldMembership[]>(
      `SELECT user_id::text AS "userId", role, status, starts_at AS "startsAt", ends_at AS "endsAt"
       FROM user_module_roles
       WHERE module_id = $1 AND user_id = ANY($2::bigint[])
       ORDER BY user_id FOR UPDATE`,
      [moduleId, userIds],
    );
  }

  /**
   * Writes each membership (role, status, dates; inserted, or replacing the stored one) in one statement and
   * returns the users whose row was written, in id order. With `keepLecturers` a Lecturer row is never changed,
   * not even one another transaction committed after the caller's checks: the caller then finds it with
   * {@link lockHeld} and refuses. A write that breaks `ends_at` after `starts_at` fails on
   * `ck_user_module_roles_dates` (the service checks first).
   */
  async writeMemberships(
    moduleId: string,
    writes: readonly MembershipWrite[],
    manager: EntityManager,
    keepLecturers = false,
  ): Promise<string[]> {
    if (writes.length === 0) return [];
    const rows = await manager.query<{ user_id: string }[]>(
      `INSERT INTO user_module_roles (user_id, module_id, role, status, starts_at, ends_at)
       SELECT id, $1, role, status, starts_at, ends_at
       FROM unnest($2::bigint[], $3::module_role[], $4::membership_status[], $5::timestamptz[], $6::timestamptz[])
         AS named(id, role, status, starts_at, ends_at)
       ORDER BY id
       ON CONFLICT (user_id, module_id) DO UPDATE
         SET role = EXCLUDED.role, status = EXCLUDED.status, starts_at = EXCLUDED.starts_at,
             ends_at = EXCLUDED.ends_at
       WHERE (user_module_roles.role, user_module_roles.status, user_module_roles.starts_at,
              user_module_roles.ends_at) IS DISTINCT FROM
             (EXCLUDED.role, EXCLUDED.status, EXCLUDED.starts_at, EXCLUDED.ends_at)
         AND NOT ($7::boolean AND user_module_roles.role = 'Lecturer')
       RETURNING user_id::text AS user_id`,
      [
        moduleId,
        writes.map((write) => write.userId),
        writes.map((write) => write.role),
        writes.map((write) => write.status),
        writes.map((write) => write.startsAt),
        writes.map((write) => write.endsAt),
        keepLecturers,
      ],
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
   * Copies the role rows of `roles` from each pair's `from` module to its `to` module, but for users who
   * already hold a role there, and writes the rollover's change events in the same statement: `events` first
   * (the new modules' `module.created`), then one `module.members_changed` per module that got members, built
   * by PostgreSQL from the copied rows (`copiedMembersEventRows`). Only the counts come back, so the service's
   * memory does not grow with the number of members copied (docs/api.md §13). Each copied member's user is
   * share-locked, so a user deleted meanwhile is not copied to a row that would outlive it.
   */
  async copyMembers(
    pairs: ModulePairs,
    roles: readonly ModuleRole[],
    events: readonly NewChangeEvent[],
    manager: EntityManager,
  ): Promise<CopiedMembers> {
    const [row] = await manager.query<{ copied: [string, number][]; events: Record<string, number> }[]>(
      `WITH copied AS (
         INSERT INTO user_module_roles (user_id, module_id, role)
         SELECT r.user_id, p.to_id, r.role ${PAIR_ROLES}
         JOIN users u ON u.id = r.user_id
         WHERE ${COPIED_ROLE}
         ORDER BY p.to_id, r.user_id
         FOR KEY SHARE OF u
         ON CONFLICT (user_id, module_id) DO NOTHING
         RETURNING user_id, module_id, role
       ),
       events AS (${copiedMembersEventRows('copied', '$4')}),
       counts AS (SELECT module_id, count(*)::int AS n FROM copied GROUP BY module_id),
       types AS (SELECT type, count(*)::int AS n FROM events GROUP BY type)
       SELECT coalesce((SELECT json_agg(json_build_array(module_id::text, n)) FROM counts), '[]') AS copied,
              coalesce((SELECT json_object_agg(type, n) FROM types), '{}') AS events,
              (SELECT ${CHANGE_EVENTS_NOTIFY} FROM types LIMIT 1)::text AS notified`,
      [
        pairs.from,
        pairs.to,
        roles,
        JSON.stringify(events.map((event) => ({ type: event.type, data: event.data ?? null }))),
      ],
    );
    return {
      copied: new Map(row.copied),
      events: new Map(Object.entries(row.events) as [ChangeEventType, number][]),
    };
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
       WHERE ${COPIED_ROLE}
         AND NOT EXISTS (SELECT 1 FROM user_module_roles h WHERE h.user_id = r.user_id AND h.module_id = p.to_id)
       GROUP BY p.from_id`,
      [pairs.from, pairs.to, roles],
    );
    return new Map(rows.map((row) => [row.fromId, row.n]));
  }

  /**
   * Ends the named members' memberships instead of deleting them (a roster sync's `on_remove`): sets `status`,
   * in one statement.
   */
  async conclude(
    moduleId: string,
    userIds: readonly number[],
    status: MembershipStatus,
    manager: EntityManager,
  ): Promise<void> {
    if (userIds.length === 0) return;
    await manager.query(
      `UPDATE user_module_roles SET status = $3 WHERE module_id = $1 AND user_id = ANY($2::bigint[])`,
      [moduleId, userIds, status],
    );
  }

  /** Removes the named members' role rows, in one statement. */
  async removeMembers(moduleId: string, userIds: readonly number[], manager: EntityManager): Promise<void> {
    if (userIds.length === 0) return;
    await manager.query(
      `DELETE FROM user_module_roles WHERE module_id = $1 AND user_id = ANY($2::bigint[])`,
      [moduleId, userIds],
    );
  }

  /**
   * Takes the time sweep's lock until the transaction ends, if no other transaction holds it: false when one does
   * (another replica is sweeping).
   */
  async tryLockSweep(manager: EntityManager): Promise<boolean> {
    const [{ locked }] = await manager.query<{ locked: boolean }[]>(
      `SELECT pg_try_advisory_xact_lock($1) AS locked`,
      [MEMBERSHIP_SWEEP_LOCK],
    );
    return locked;
  }

  /**
   * The time sweep (membership-sweep.ts): the role rows whose `starts_at` or `ends_at` has passed since a change
   * event last reported them (`reported_status`, the effective status then), at most `limit`, locked in (module,
   * user) order and marked reported, in one statement. Returns each with its effective status now, in that order.
   * A row another transaction marked meanwhile is re-checked under its lock and skipped, so no row is reported
   * twice. The candidates come from the two partial indexes of migration MembershipLifecycle.
   */
  async markPassedWindows(
    limit: number,
    manager: EntityManager,
  ): Promise<{ moduleId: string; userId: string; effective: string }[]> {
    // An UPDATE answers [rows, count].
    const [rows] = await manager.query<[{ moduleId: string; userId: string; effective: string }[], number]>(
      `WITH due AS (
         SELECT r.user_id, r.module_id FROM user_module_roles r
         WHERE (r.reported_status = 'upcoming' AND r.starts_at <= now())
            OR (r.reported_status IN ('active', 'upcoming') AND r.ends_at <= now())
         ORDER BY r.module_id, r.user_id
         LIMIT $1
         FOR UPDATE
       )
       UPDATE user_module_roles r SET reported_status = ${effectiveStatusOf('r')}
       FROM due
       WHERE r.user_id = due.user_id AND r.module_id = due.module_id
         AND r.reported_status IS DISTINCT FROM ${effectiveStatusOf('r')}
       RETURNING r.module_id::text AS "moduleId", r.user_id::text AS "userId", r.reported_status AS effective`,
      [limit],
    );
    return rows;
  }
}
