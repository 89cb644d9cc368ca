import { type Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { containsPattern, orderByClause } from '../database/sql.js';
import { streamRows } from '../database/query-stream.js';
import { type UserListParams } from './list-params.js';
import { DEFAULT_USER_SORT } from './module-queries.js';
import { type ModuleRole } from './module-role.js';
import { type KnownUser, type Member } from './roster-import.js';

/** The SQL of roster imports and exports. */
@Injectable()
export class RosterRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The module's code (undefined when there is no such module) and the caller's role in it; `lock` keeps it. */
  async viewer(
    manager: EntityManager = this.dataSource.manager,
    moduleId: string,
    callerId: number,
    lock: boolean,
  ): Promise<{ role: ModuleRole | null } | undefined> {
    const rows = await manager.query<{ role: ModuleRole | null }[]>(
      `SELECT (SELECT r.role FROM user_module_roles r WHERE r.module_id = m.id AND r.user_id = $2) AS role
       FROM modules m WHERE m.id = $1 ${lock ? 'FOR KEY SHARE OF m' : ''}`,
      [moduleId, callerId],
    );
    return rows[0];
  }

  /** Every member with their role, locked until commit. */
  members(manager: EntityManager, moduleId: string): Promise<Member[]> {
    return manager.query<Member[]>(
      `SELECT u.id, u.username, r.role FROM user_module_roles r JOIN users u ON u.id = r.user_id
       WHERE r.module_id = $1 ORDER BY lower(u.username), u.id FOR UPDATE OF r`,
      [moduleId],
    );
  }

  /** Stored users named by username or email (case-insensitively), keyed by each lower-cased; locked against deletion. */
  async findByNames(manager: EntityManager, values: readonly string[]): Promise<Map<string, KnownUser>> {
    // PostgreSQL text cannot hold U+0000: such a value names nobody.
    const names = [...new Set(values.filter((value) => !value.includes('\u0000')))];
    const rows = await manager.query<(KnownUser & { email: string })[]>(
      `SELECT u.id, u.username, u.email FROM users u
       WHERE lower(u.username) = ANY($1::text[]) OR lower(u.email) = ANY($1::text[]) ORDER BY u.id FOR KEY SHARE`,
      [names],
    );
    const found = new Map<string, KnownUser>();
    for (const row of rows) {
      const user = { id: Number(row.id), username: row.username };
      found.set(row.username.toLowerCase(), user);
      found.set(row.email.toLowerCase(), user);
    }
    return found;
  }

  /** Gives each user its role (replacing another) and removes `removeIds`, in `manager`'s transaction. */
  async apply(
    manager: EntityManager,
    moduleId: string,
    writes: readonly { userId: number; role: ModuleRole }[],
    removeIds: readonly number[],
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

  /** Every member matching the personnel list's filters, in its order, streamed from a cursor. */
  streamMembers(moduleId: string, params: UserListParams): Promise<Readable> {
    const values: unknown[] = [moduleId];
    const conditions = ['r.module_id = $1'];
    if (params.role) conditions.push(`r.role = $${values.push(params.role)}`);
    if (params.query) {
      const pattern = `$${values.push(containsPattern(params.query))}`;
      conditions.push(`(u.username ILIKE ${pattern} OR u.email ILIKE ${pattern})`);
    }
    const order = orderByClause(params.sort.length > 0 ? params.sort : DEFAULT_USER_SORT, 'u.id');
    return streamRows(
      this.dataSource,
      `SELECT u.id AS user_id, u.username, u.email, r.role
       FROM user_module_roles r JOIN users u ON u.id = r.user_id
       WHERE ${conditions.join(' AND ')} ORDER BY ${order}`,
      values,
    );
  }
}
