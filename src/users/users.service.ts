import { Injectable, Logger } from '@nestjs/common';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { Transactions } from '../database/transactions.js';
import { ChangeEventsService } from '../events/change-events.service.js';
import { type AuthUser } from '../core/decorators.js';
import { parseSort, type Query, QueryReader } from '../core/query.js';
import { violatedUniqueConstraint } from '../database/sql.js';
import { StorageService } from '../storage/storage.service.js';
import { avatarFolder } from './avatar-files.js';
import { type CreateUserDto } from './dto/create-user.dto.js';
import { type UpdateUserDto } from './dto/update-user.dto.js';
import { PasswordHasher } from './password-hasher.js';
import { UserAccessCache } from './user-access.cache.js';
import { listClashes, type NewUserIdentity } from './user-clashes.js';
import { readUserFilters, USER_LIST_SORT_FIELDS } from './user-list-filter.js';
import { mapWithConcurrency } from './map-with-concurrency.js';
import { toUserSummary, type UserSummary } from './user.mapper.js';
import { type NewUser, type UserChanges, UsersRepository } from './users.repository.js';
import {
  CannotDeleteSelf,
  CannotDemoteSelf,
  DuplicateEmail,
  DuplicateUsername,
  DuplicateUsers,
  NothingToUpdate,
  UserNotFound,
} from './users.errors.js';

/** argon2id runs on libuv's pool (4 threads by default): a bulk create never takes all of it. */
const HASH_CONCURRENCY = 2;

export interface UserPage {
  users: UserSummary[];
  page: number;
  per_page: number;
  total: number;
}

@Injectable()
export class UsersService {
  private readonly logger = new Logger(UsersService.name);

  constructor(
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly access: UserAccessCache,
    private readonly storage: StorageService,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly changeEvents: ChangeEventsService,
  ) {}

  async list(query: Query): Promise<UserPage> {
    const reader = new QueryReader(query);
    const filters = readUserFilters(reader);
    const paging = reader.paging();
    reader.done();
    const sort = parseSort(query.sort, USER_LIST_SORT_FIELDS);
    const { items, total } = await this.users.page({ ...filters, sort, paging });
    return { users: items.map(toUserSummary), page: paging.page, per_page: paging.perPage, total };
  }

  async create(dto: CreateUserDto, context: RequestContext): Promise<UserSummary> {
    const passwordHash = await this.hasher.hash(dto.password);
    try {
      return await this.transactions.run(async (transaction) => {
        const created = await this.users.insert(newUser(dto, passwordHash), transaction);
        await this.audit.record(transaction, context, {
          action: 'user.create',
          targetType: 'user',
          targetIds: [created.id],
          summary: nameOf(created),
        });
        const summary = toUserSummary(created);
        await this.changeEvents.record(transaction, [{ type: 'user.created', data: summary }]);
        return summary;
      });
    } catch (error) {
      throw duplicateError(error) ?? error;
    }
  }

  /** All or nothing: one statement inserts the batch, after every clash has been listed up front. */
  async createMany(entries: readonly CreateUserDto[], context: RequestContext): Promise<UserSummary[]> {
    const clashes = await this.clashesWithStored(entries);
    if (clashes.length > 0) throw new DuplicateUsers(clashes);
    const hashes = await mapWithConcurrency(entries, HASH_CONCURRENCY, (entry) =>
      this.hasher.hash(entry.password),
    );
    let rows: Awaited<ReturnType<UsersRepository['insertMany']>>;
    try {
      rows = await this.transactions.run(async (transaction) => {
        const created = await this.users.insertMany(
          entries.map((entry, index) => newUser(entry, hashes[index])),
          transaction,
        );
        const inOrder = new Map(created.map((row) => [row.username.toLowerCase(), row]));
        const ordered = entries.map((entry) => inOrder.get(entry.username.toLowerCase())!);
        await this.audit.record(transaction, context, {
          action: 'user.bulk_create',
          targetType: 'user',
          targetIds: ordered.map((row) => row.id),
          summary: { users: ordered.map(nameOf) },
        });
        await this.changeEvents.record(
          transaction,
          ordered.map((row) => ({ type: 'user.created', data: toUserSummary(row) })),
        );
        return created;
      });
    } catch (error) {
      if (violatedUniqueConstraint(error) === undefined) throw error;
      // Another request stored a clashing user meanwhile: list the clashes as they are now.
      const now = await this.clashesWithStored(entries);
      throw now.length > 0 ? new DuplicateUsers(now) : (duplicateError(error) ?? error);
    }
    const byUsername = new Map(rows.map((row) => [row.username.toLowerCase(), row]));
    return entries.map((entry) => toUserSummary(byUsername.get(entry.username.toLowerCase())!));
  }

  private async clashesWithStored(batch: readonly NewUserIdentity[]): Promise<string[]> {
    const stored = await this.users.storedIdentities(
      batch.map((entry) => entry.username),
      batch.map((entry) => entry.email),
    );
    return listClashes(batch, {
      usernames: new Set(stored.map((user) => user.username)),
      emails: new Set(stored.map((user) => user.email)),
    });
  }

  async get(id: string): Promise<UserSummary> {
    const user = await this.users.findById(id);
    if (!user) throw new UserNotFound();
    return toUserSummary(user);
  }

  async update(
    id: string,
    dto: UpdateUserDto,
    caller: AuthUser,
    context: RequestContext,
  ): Promise<UserSummary> {
    const { username, email, password, admin } = dto;
    if (username === undefined && email === undefined && password === undefined && admin === undefined)
      throw new NothingToUpdate();
    const before = await this.users.findById(id);
    if (!before) throw new UserNotFound();
    if (admin === false && String(caller.id) === id) throw new CannotDemoteSelf();

    // Hashed first: the change's time is taken after the (slow) hash, so a token issued with the old password
    // while the hash was computed is still in an earlier second or the same one, never a later one.
    const passwordHash = password === undefined ? undefined : await this.hasher.hash(password);
    const now = new Date();
    const changes: UserChanges = { updatedAt: now, username, email: email?.toLowerCase(), admin };
    if (passwordHash !== undefined) {
      // Tokens issued in an earlier second than this are refused from now on (docs/api.md §2).
      changes.passwordHash = passwordHash;
      changes.passwordChangedAt = now;
    }
    let updated: Awaited<ReturnType<UsersRepository['update']>>;
    try {
      updated = await this.transactions.run(async (transaction) => {
        const row = await this.users.update(id, changes, transaction);
        if (!row) return null;
        const summary: Record<string, unknown> = {};
        for (const field of ['username', 'email', 'admin'] as const) {
          if (changes[field] !== undefined && changes[field] !== before[field])
            summary[field] = { from: before[field], to: changes[field] };
        }
        if (password !== undefined) summary.password = 'changed';
        await this.audit.record(transaction, context, {
          action: 'user.update',
          targetType: 'user',
          targetIds: [id],
          summary,
        });
        await this.changeEvents.record(transaction, [{ type: 'user.updated', data: toUserSummary(row) }]);
        return row;
      });
    } catch (error) {
      throw duplicateError(error) ?? error;
    }
    if (!updated) throw new UserNotFound();
    if (password !== undefined || admin !== undefined) this.access.invalidate(Number(id));
    return toUserSummary(updated);
  }

  /**
   * Clears the user's single sign-on binding (docs/sso.md, "Binding"): the next IdP token that names the user
   * binds it again. Audited as `user.update`; the User summary's `updated_at` moves.
   */
  async clearSsoBinding(id: string, context: RequestContext): Promise<UserSummary> {
    const updated = await this.transactions.run(async (transaction) => {
      const row = await this.users.clearSsoBinding(id, new Date(), transaction);
      if (!row) return null;
      await this.audit.record(transaction, context, {
        action: 'user.update',
        targetType: 'user',
        targetIds: [id],
        summary: { sso_binding: 'removed' },
      });
      await this.changeEvents.record(transaction, [{ type: 'user.updated', data: toUserSummary(row) }]);
      return row;
    });
    if (!updated) throw new UserNotFound();
    return toUserSummary(updated);
  }

  /** Deletes the user (role assignments go with it, by foreign key), then the avatar files. */
  async remove(id: string, caller: AuthUser, context: RequestContext): Promise<void> {
    const user = await this.users.findById(id);
    if (!user) throw new UserNotFound();
    if (String(caller.id) === id) throw new CannotDeleteSelf();
    await this.transactions.run(async (transaction) => {
      if (!(await this.users.delete(id, transaction))) throw new UserNotFound();
      await this.audit.record(transaction, context, {
        action: 'user.delete',
        targetType: 'user',
        targetIds: [id],
        summary: { username: user.username },
      });
      await this.changeEvents.record(transaction, [
        { type: 'user.deleted', data: { id: Number(id), username: user.username } },
      ]);
    });
    this.access.invalidate(Number(id));
    await this.storage.remove(avatarFolder(id)).catch((error: unknown) => {
      // The user is gone either way; a leftover file is only disk space.
      this.logger.warn(`Could not remove the avatar of deleted user ${id}: ${String(error)}`);
    });
  }

  /** 404 `User not found` unless the user exists. */
  async requireUser(id: string): Promise<void> {
    if (!(await this.users.exists(id))) throw new UserNotFound();
  }
}

/** A created user in an audit summary: the username, and `admin` where true. */
function nameOf(user: { username: string; admin: boolean }): Record<string, unknown> {
  return user.admin ? { username: user.username, admin: true } : { username: user.username };
}

function newUser(dto: CreateUserDto, passwordHash: string): NewUser {
  return { username: dto.username, email: dto.email.toLowerCase(), passwordHash, admin: dto.admin ?? false };
}

/** The 409 for a unique violation on username or email, or undefined for any other error. */
function duplicateError(error: unknown): DuplicateUsername | DuplicateEmail | undefined {
  const constraint = violatedUniqueConstraint(error);
  if (constraint === 'uq_users_username_lower') return new DuplicateUsername();
  if (constraint === 'uq_users_email_lower') return new DuplicateEmail();
  return undefined;
}
