import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { type AuthUser } from '../core/decorators.js';
import { PermissionDenied } from '../core/errors.js';
import { INT64_MAX } from '../core/id.pipe.js';
import { type UserSummary, type UserSummarySource, toUserSummary } from '../users/user.mapper.js';
import { type UserListParams } from './list-params.js';
import {
  canManageRole,
  canViewPersonnel,
  canViewStudents,
  mayReassign,
  type ModuleViewer,
} from './module-access.js';
import { ModuleNotFound, RoleNotHeld, UserDoesNotExist } from './module.errors.js';
import { type PersonnelMember, toPersonnelMember } from './module.mapper.js';
import { eligibleUsersQuery, type PageRow, personnelListQuery, splitPage } from './module-queries.js';
import { ModuleRole } from './module-role.js';

export interface UserPage<T> {
  users: T[];
  page: number;
  per_page: number;
  total: number;
}

/** Which list is asked for: the whole personnel (staff only) or the student roster (teaching staff). */
export type RosterView = 'personnel' | 'students';

type MemberRow = UserSummarySource & { role: ModuleRole };

/** The named ids once each, in request order, as exact decimal strings. */
function distinctIds(ids: readonly number[]): string[] {
  return [...new Set(ids.map((id) => BigInt(id).toString()))];
}

function toPage<T extends { id: unknown }, R>(
  rows: PageRow<T>[],
  params: UserListParams,
  map: (row: T) => R,
): UserPage<R> {
  const { items, total } = splitPage(rows);
  return { users: items.map(map), page: params.paging.page, per_page: params.paging.perPage, total };
}

/** Personnel (§4.1) and students (§4.2) of a module. Writes are all-or-nothing. */
@Injectable()
export class PersonnelService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** 404 for an unknown module, else the caller's standing in it; `lock` keeps the module until commit. */
  private async viewerOf(
    manager: EntityManager,
    moduleId: string,
    caller: AuthUser,
    lock = false,
  ): Promise<ModuleViewer> {
    const rows = await manager.query<{ role: ModuleRole | null }[]>(
      `SELECT (SELECT r.role FROM user_module_roles r WHERE r.module_id = m.id AND r.user_id = $2) AS role
       FROM modules m WHERE m.id = $1 ${lock ? 'FOR KEY SHARE OF m' : ''}`,
      [moduleId, caller.id],
    );
    if (rows.length === 0) throw new ModuleNotFound();
    return { admin: caller.admin, role: rows[0].role };
  }

  async list(
    moduleId: string,
    caller: AuthUser,
    params: UserListParams,
    view: RosterView,
  ): Promise<UserPage<PersonnelMember>> {
    const viewer = await this.viewerOf(this.dataSource.manager, moduleId, caller);
    const allowed = view === 'students' ? canViewStudents(viewer) : canViewPersonnel(viewer);
    if (!allowed) throw new PermissionDenied();
    const role = view === 'students' ? ModuleRole.Student : params.role;
    const { sql, params: values } = personnelListQuery({ ...params, moduleId, role });
    const rows = await this.dataSource.query<PageRow<MemberRow>[]>(sql, values);
    return toPage(rows, params, toPersonnelMember);
  }

  async eligible(moduleId: string, caller: AuthUser, params: UserListParams): Promise<UserPage<UserSummary>> {
    const viewer = await this.viewerOf(this.dataSource.manager, moduleId, caller);
    if (!canViewPersonnel(viewer)) throw new PermissionDenied();
    const { sql, params: values } = eligibleUsersQuery({ ...params, moduleId });
    const rows = await this.dataSource.query<PageRow<UserSummarySource>[]>(sql, values);
    return toPage(rows, params, toUserSummary);
  }

  /** Gives each named user `role` in the module, replacing another role there. Returns the distinct count. */
  async assign(
    moduleId: string,
    caller: AuthUser,
    userIds: readonly number[],
    role: ModuleRole,
  ): Promise<number> {
    return this.changeRoles(moduleId, caller, userIds, role, async (manager, ids, viewer) => {
      const current = await manager.query<{ role: ModuleRole }[]>(
        `SELECT role FROM user_module_roles
         WHERE module_id = $1 AND user_id = ANY($2::bigint[]) AND role <> $3
         ORDER BY user_id FOR UPDATE`,
        [moduleId, ids, role],
      );
      // A Lecturer may not change an existing Lecturer's role (403, after the users' existence).
      if (
        !mayReassign(
          viewer,
          current.map((row) => row.role),
        )
      )
        throw new PermissionDenied();
      await manager.query(
        `INSERT INTO user_module_roles (user_id, module_id, role)
         SELECT id, $1, $3 FROM unnest($2::bigint[]) AS named(id)
         ON CONFLICT (user_id, module_id) DO UPDATE SET role = EXCLUDED.role
         WHERE user_module_roles.role <> EXCLUDED.role`,
        [moduleId, ids, role],
      );
      return ids.length;
    });
  }

  /** Takes `role` away from each named user; all must hold it, else nothing changes (409). */
  async remove(
    moduleId: string,
    caller: AuthUser,
    userIds: readonly number[],
    role: ModuleRole,
  ): Promise<number> {
    return this.changeRoles(moduleId, caller, userIds, role, async (manager, ids) => {
      const [, removed] = await manager.query<[unknown[], number]>(
        `DELETE FROM user_module_roles WHERE module_id = $1 AND user_id = ANY($2::bigint[]) AND role = $3`,
        [moduleId, ids, role],
      );
      // Throwing rolls the transaction back, so a partial removal never commits.
      if (removed !== ids.length) throw new RoleNotHeld();
      return removed;
    });
  }

  /**
   * The checks every personnel write makes, in the contract's order, inside one transaction: the module
   * exists (404, locked), the caller may manage `role` (403), every named user exists (404, locked). `change`
   * then runs with the distinct ids; throwing from it rolls everything back.
   */
  private changeRoles(
    moduleId: string,
    caller: AuthUser,
    userIds: readonly number[],
    role: ModuleRole,
    change: (manager: EntityManager, ids: string[], viewer: ModuleViewer) => Promise<number>,
  ): Promise<number> {
    const ids = distinctIds(userIds);
    return this.dataSource.transaction(async (manager) => {
      const viewer = await this.viewerOf(manager, moduleId, caller, true);
      if (!canManageRole(viewer, role)) throw new PermissionDenied();
      await this.requireUsers(manager, ids);
      return change(manager, ids, viewer);
    });
  }

  /** 404 naming the first unknown user in request order; the known ones stay locked against deletion. */
  private async requireUsers(manager: EntityManager, ids: string[]): Promise<void> {
    // A JSON number just under 2^63 arrives rounded to 2^63, which is no bigint and so no user.
    const inRange = ids.filter((id) => BigInt(id) <= INT64_MAX);
    const rows = await manager.query<{ id: string }[]>(
      `SELECT u.id::text AS id FROM users u WHERE u.id = ANY($1::bigint[]) ORDER BY u.id FOR KEY SHARE`,
      [inRange],
    );
    const existing = new Set(rows.map((row) => row.id));
    const unknown = ids.find((id) => !existing.has(id));
    if (unknown !== undefined) throw new UserDoesNotExist(unknown);
  }
}
