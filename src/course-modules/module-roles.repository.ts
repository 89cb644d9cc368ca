import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, Repository } from 'typeorm';
import { type Page, type PageRow, splitPage } from '../database/sql.js';
import { type UserSummarySource } from '../users/user.mapper.js';
import {
  eligibleUsersQuery,
  MODULE_PERSONNEL_SQL,
  personnelListQuery,
  type UserListFilter,
} from './module-queries.js';
import { type ModuleRole } from './module-role.js';
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

  /** Users holding no role in the module: one page and the total, in one statement. */
  async eligiblePage(filter: UserListFilter): Promise<Page<UserSummarySource>> {
    const { sql, params } = eligibleUsersQuery(filter);
    return splitPage(await this.roles.query<PageRow<UserSummarySource>[]>(sql, params));
  }

  /** Everyone holding a role in the module, by username (case-insensitive), for the single read. */
  holders(moduleId: string): Promise<MemberRow[]> {
    return this.roles.query(MODULE_PERSONNEL_SQL, [moduleId]);
  }

  /** The roles other than `role` that the named users hold in the module, locked in user id order. */
  async lockOtherRoles(
    moduleId: string,
    userIds: readonly string[],
    role: ModuleRole,
    manager: EntityManager,
  ): Promise<ModuleRole[]> {
    const rows = await manager.query<{ role: ModuleRole }[]>(
      `SELECT role FROM user_module_roles
       WHERE module_id = $1 AND user_id = ANY($2::bigint[]) AND role <> $3
       ORDER BY user_id FOR UPDATE`,
      [moduleId, userIds, role],
    );
    return rows.map((row) => row.role);
  }

  /** Gives each named user `role` in the module, replacing another role there, in one statement. */
  async assign(
    moduleId: string,
    userIds: readonly string[],
    role: ModuleRole,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO user_module_roles (user_id, module_id, role)
       SELECT id, $1, $3 FROM unnest($2::bigint[]) AS named(id)
       ON CONFLICT (user_id, module_id) DO UPDATE SET role = EXCLUDED.role
       WHERE user_module_roles.role <> EXCLUDED.role`,
      [moduleId, userIds, role],
    );
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
}
