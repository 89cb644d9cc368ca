import { type Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, Repository } from 'typeorm';
import { preparedQuery } from '../database/prepared.js';
import { streamRows } from '../database/query-stream.js';
import { type Page, type PageRow, splitPage } from '../database/sql.js';
import { type UserSummarySource } from '../users/user.mapper.js';
import {
  eligibleUsersQuery,
  MODULE_PERSONNEL_JSON_SQL,
  personnelExportQuery,
  type PersonnelFilter,
  type PersonnelJson,
  personnelListQuery,
  type UserListFilter,
} from './module-queries.js';
import { type ModuleRole } from './module-role.js';
import { type Member } from './roster-import.js';
import { UserModuleRole } from './user-module-role.entity.js';

/** A user with the role held in a module. */
export type MemberRow = UserSummarySource & { role: ModuleRole };

/** The only code that reads or writes `user_module_roles` (bar the cascade of a module delete). */
@Injectable()
export class ModuleRolesRepository {
  constructor(@InjectRepository(UserModuleRole) private readonly roles: Repository<UserModuleRole>) {}

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
  async personnelPage(filter: UserListFilter & { role?: ModuleRole }): Promise<Page<MemberRow>> {
    const { sql, params } = personnelListQuery(filter);
    return splitPage(await this.roles.query<PageRow<MemberRow>[]>(sql, params));
  }

  /** Every role holder matching the personnel list's filters, in its order, streamed from a cursor. */
  async streamPersonnel(filter: PersonnelFilter): Promise<Readable> {
    const { sql, params } = personnelExportQuery(filter);
    return streamRows(this.roles.manager.connection, sql, params);
  }

  /** Users holding no role in the module: one page and the total, in one statement. */
  async eligiblePage(filter: UserListFilter): Promise<Page<UserSummarySource>> {
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
   * users whose row was written (not those who held `role` already), in id order.
   */
  async assign(
    moduleId: string,
    userIds: readonly string[],
    role: ModuleRole,
    manager: EntityManager,
  ): Promise<string[]> {
    const rows = await manager.query<{ user_id: string }[]>(
      `INSERT INTO user_module_roles (user_id, module_id, role)
       SELECT id, $1, $3 FROM unnest($2::bigint[]) AS named(id)
       ON CONFLICT (user_id, module_id) DO UPDATE SET role = EXCLUDED.role
       WHERE user_module_roles.role <> EXCLUDED.role
       RETURNING user_id::text AS user_id`,
      [moduleId, userIds, role],
    );
    return rows.map((row) => row.user_id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
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

  /** Gives each user its role (replacing another) and removes `removeIds`, in `manager`'s transaction. */
  async applyRoster(
    moduleId: string,
    writes: readonly { userId: number; role: ModuleRole }[],
    removeIds: readonly number[],
    manager: EntityManager,
  ): Promise<void> {
    if (writes.length > 0) {
      await manager.query(
        `INSERT INTO user_module_roles (user_id, module_id, role)
         SELECT id, $1, role FROM unnest($2::bigint[], $3::module_role[]) AS named(id, role)
         ON CONFLICT (user_id, module_id) DO UPDATE SET role = EXCLUDED.role`,
        [moduleId, writes.map((write) => write.userId), writes.map((write) => write.role)],
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
