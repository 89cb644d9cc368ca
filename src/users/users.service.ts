import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PasswordHasher } from '../auth/password-hasher.js';
import { UserAccessCache } from '../auth/user-access.cache.js';
import { type AuthUser } from '../core/decorators.js';
import { containsPattern, orderByClause, parseSort, type Query, QueryReader } from '../core/query.js';
import { type ModuleRole } from '../course-modules/module-role.js';
import {
  type ModuleResponse,
  type ModuleSource as ModuleRow,
  toModuleResponse,
} from '../course-modules/module.mapper.js';
import { StorageService } from '../storage/storage.service.js';
import { avatarFolder } from './avatar-files.js';
import { type CreateUserDto } from './dto/create-user.dto.js';
import { type UpdateUserDto } from './dto/update-user.dto.js';
import { listClashes, type NewUserIdentity } from './user-clashes.js';
import {
  fromUserRow,
  mapWithConcurrency,
  USER_COLUMNS,
  type UserRow,
  violatedUniqueIndex,
} from './user-row.js';
import { toUserSummary, type UserSummary } from './user.mapper.js';
import {
  CannotDeleteSelf,
  CannotDemoteSelf,
  DuplicateEmail,
  DuplicateUsername,
  DuplicateUsers,
  NothingToUpdate,
  UserNotFound,
} from './users.errors.js';

/** Sort fields of `GET /api/users`; usernames sort case-insensitively (emails are stored lower-case). */
const SORT_FIELDS = {
  username: 'lower(u.username)',
  email: 'u.email',
  created_at: 'u.created_at',
  admin: 'u.admin',
} as const;

/** argon2id runs on libuv's pool (4 threads by default): a bulk create never takes all of it. */
const HASH_CONCURRENCY = 2;

export interface UserPage {
  users: UserSummary[];
  page: number;
  per_page: number;
  total: number;
}

/** A Module with the user's role in it. */
export type UserModule = ModuleResponse & { role: ModuleRole };

@Injectable()
export class UsersService {
  private readonly logger = new Logger(UsersService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly hasher: PasswordHasher,
    private readonly access: UserAccessCache,
    private readonly storage: StorageService,
  ) {}

  async list(query: Query): Promise<UserPage> {
    const reader = new QueryReader(query);
    const text = reader.string('query');
    const username = reader.string('username');
    const email = reader.string('email');
    const admin = reader.boolean('admin');
    const paging = reader.paging();
    reader.done();
    const order = orderByClause(parseSort(query.sort, SORT_FIELDS), 'u.id');

    const params: unknown[] = [];
    const conditions: string[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    if (text !== undefined) {
      const pattern = param(containsPattern(text));
      conditions.push(`(u.username ILIKE ${pattern} OR u.email ILIKE ${pattern})`);
    }
    if (username !== undefined) conditions.push(`u.username ILIKE ${param(containsPattern(username))}`);
    if (email !== undefined) conditions.push(`u.email ILIKE ${param(containsPattern(email))}`);
    if (admin !== undefined) conditions.push(`u.admin = ${param(admin)}`);
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';

    const filterParams = [...params];
    const rows = await this.dataSource.query<UserRow[]>(
      `SELECT ${USER_COLUMNS} FROM users u ${where}
       ORDER BY ${order} LIMIT ${param(paging.perPage)} OFFSET ${param(paging.offset)}`,
      params,
    );
    const [{ total }] = await this.dataSource.query<{ total: string }[]>(
      `SELECT count(*) AS total FROM users u ${where}`,
      filterParams,
    );
    return {
      users: rows.map((row) => toUserSummary(fromUserRow(row))),
      page: paging.page,
      per_page: paging.perPage,
      total: Number(total),
    };
  }

  async create(dto: CreateUserDto): Promise<UserSummary> {
    const hash = await this.hasher.hash(dto.password);
    try {
      const [row] = await this.dataSource.query<UserRow[]>(
        `INSERT INTO users AS u (username, email, password_hash, admin) VALUES ($1, $2, $3, $4)
         RETURNING ${USER_COLUMNS}`,
        [dto.username, dto.email.toLowerCase(), hash, dto.admin ?? false],
      );
      return toUserSummary(fromUserRow(row));
    } catch (error) {
      throw duplicateError(error) ?? error;
    }
  }

  /** All or nothing: one statement inserts the batch, after every clash has been listed up front. */
  async createMany(entries: readonly CreateUserDto[]): Promise<UserSummary[]> {
    const clashes = await this.clashesWithStored(entries);
    if (clashes.length > 0) throw new DuplicateUsers(clashes);
    const hashes = await mapWithConcurrency(entries, HASH_CONCURRENCY, (entry) =>
      this.hasher.hash(entry.password),
    );
    let rows: UserRow[];
    try {
      rows = await this.dataSource.query<UserRow[]>(
        `INSERT INTO users AS u (username, email, password_hash, admin)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[])
         RETURNING ${USER_COLUMNS}`,
        [
          entries.map((entry) => entry.username),
          entries.map((entry) => entry.email.toLowerCase()),
          hashes,
          entries.map((entry) => entry.admin ?? false),
        ],
      );
    } catch (error) {
      if (violatedUniqueIndex(error) === undefined) throw error;
      // Another request stored a clashing user meanwhile: list the clashes as they are now.
      const now = await this.clashesWithStored(entries);
      throw now.length > 0 ? new DuplicateUsers(now) : (duplicateError(error) ?? error);
    }
    const byUsername = new Map(rows.map((row) => [row.username.toLowerCase(), row]));
    return entries.map((entry) => toUserSummary(fromUserRow(byUsername.get(entry.username.toLowerCase())!)));
  }

  private async clashesWithStored(batch: readonly NewUserIdentity[]): Promise<string[]> {
    const usernames = batch.map((entry) => entry.username.toLowerCase());
    const emails = batch.map((entry) => entry.email.toLowerCase());
    const stored = await this.dataSource.query<{ username: string; email: string }[]>(
      `SELECT lower(username) AS username, lower(email) AS email FROM users
       WHERE lower(username) = ANY($1::text[]) OR lower(email) = ANY($2::text[])`,
      [usernames, emails],
    );
    return listClashes(batch, {
      usernames: new Set(stored.map((row) => row.username)),
      emails: new Set(stored.map((row) => row.email)),
    });
  }

  async get(id: string): Promise<UserSummary> {
    const [row] = await this.dataSource.query<UserRow[]>(
      `SELECT ${USER_COLUMNS} FROM users u WHERE u.id = $1`,
      [id],
    );
    if (!row) throw new UserNotFound();
    return toUserSummary(fromUserRow(row));
  }

  async update(id: string, dto: UpdateUserDto, caller: AuthUser): Promise<UserSummary> {
    const { username, email, password, admin } = dto;
    if (username === undefined && email === undefined && password === undefined && admin === undefined)
      throw new NothingToUpdate();
    await this.requireUser(id);
    if (admin === false && String(caller.id) === id) throw new CannotDemoteSelf();

    const now = new Date();
    const params: unknown[] = [id];
    const set = (column: string, value: unknown) => `${column} = $${params.push(value)}`;
    const assignments = [set('updated_at', now)];
    if (username !== undefined) assignments.push(set('username', username));
    if (email !== undefined) assignments.push(set('email', email.toLowerCase()));
    if (admin !== undefined) assignments.push(set('admin', admin));
    if (password !== undefined) {
      // Tokens issued in an earlier second than this are refused from now on (SPEC §2).
      assignments.push(set('password_hash', await this.hasher.hash(password)));
      assignments.push(set('password_changed_at', now));
    }
    let rows: UserRow[];
    try {
      [rows] = await this.dataSource.query<[UserRow[], number]>(
        `UPDATE users u SET ${assignments.join(', ')} WHERE u.id = $1 RETURNING ${USER_COLUMNS}`,
        params,
      );
    } catch (error) {
      throw duplicateError(error) ?? error;
    }
    if (rows.length === 0) throw new UserNotFound();
    if (password !== undefined || admin !== undefined) this.access.invalidate(Number(id));
    return toUserSummary(fromUserRow(rows[0]));
  }

  /** Deletes the user (role assignments go with it, by foreign key), then the avatar files. */
  async remove(id: string, caller: AuthUser): Promise<void> {
    await this.requireUser(id);
    if (String(caller.id) === id) throw new CannotDeleteSelf();
    const [, deleted] = await this.dataSource.query<[unknown[], number]>(`DELETE FROM users WHERE id = $1`, [
      id,
    ]);
    if (deleted === 0) throw new UserNotFound();
    this.access.invalidate(Number(id));
    await this.storage.remove(avatarFolder(id)).catch((error: unknown) => {
      // The user is gone either way; a leftover file is only disk space.
      this.logger.warn(`Could not remove the avatar of deleted user ${id}: ${String(error)}`);
    });
  }

  /** The modules where the user holds a role, each with that role: year descending, then code. */
  async modulesOf(id: string): Promise<UserModule[]> {
    await this.requireUser(id);
    const rows = await this.dataSource.query<(ModuleRow & { role: ModuleRole })[]>(
      `SELECT m.id, m.code, m.year, m.description, m.credits, m.created_at AS "createdAt",
              m.updated_at AS "updatedAt", r.role
       FROM user_module_roles r JOIN modules m ON m.id = r.module_id
       WHERE r.user_id = $1
       ORDER BY m.year DESC, m.code ASC, m.id ASC`,
      [id],
    );
    return rows.map((row) => ({ ...toModuleResponse(row), role: row.role }));
  }

  private async requireUser(id: string): Promise<void> {
    const rows = await this.dataSource.query<unknown[]>(`SELECT 1 FROM users WHERE id = $1`, [id]);
    if (rows.length === 0) throw new UserNotFound();
  }
}

/** The 409 for a unique violation on username or email, or undefined for any other error. */
function duplicateError(error: unknown): DuplicateUsername | DuplicateEmail | undefined {
  const index = violatedUniqueIndex(error);
  if (index === 'uq_users_username_lower') return new DuplicateUsername();
  if (index === 'uq_users_email_lower') return new DuplicateEmail();
  return undefined;
}
