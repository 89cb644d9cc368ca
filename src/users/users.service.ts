import { Injectable, Logger } from '@nestjs/common';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { type Transaction, Transactions } from '../database/transactions.js';
import { ChangeEventsService } from '../events/change-events.service.js';
import { type AuthUser } from '../core/decorators.js';
import { type JsonText, pageJsonText } from '../core/json-text.js';
import { type Precondition } from '../core/preconditions.js';
import { violatedUniqueConstraint } from '../database/sql.js';
import { StorageService } from '../storage/storage.service.js';
import { avatarFolder } from './avatar-files.js';
import { type CreateUserDto } from './dto/create-user.dto.js';
import { type UpdateUserDto } from './dto/update-user.dto.js';
import { PasswordHasher } from './password-hasher.js';
import { UserAccessCache } from './user-access.cache.js';
import { listClashes, type NewUserIdentity } from './user-clashes.js';
import { type UserListFilter } from './user-list-filter.js';
import { mapWithConcurrency } from './map-with-concurrency.js';
import { toUserAccount, type UserSummarySource } from './user.mapper.js';
import { type UserAccount } from './user.shape.js';
import { type PeopleFields, UserBulkRepository } from './user-bulk.repository.js';
import { UserListRepository } from './user-list.repository.js';
import { type Clashes, type NewUser, type UserChanges, UsersRepository } from './users.repository.js';
import {
  CannotDeactivateSelf,
  CannotDeleteSelf,
  CannotDemoteSelf,
  DuplicateEmail,
  DuplicateExternalId,
  DuplicateUsername,
  DuplicateUsers,
  NothingToUpdate,
  SsoIdentityTaken,
  UserNotFound,
} from './users.errors.js';

/** argon2id runs on libuv's pool (4 threads by default): a bulk create never takes all of it. */
const HASH_CONCURRENCY = 2;

/** Who writes: the request's audit context, and what every audit summary of the write adds (`via`, `token_id`). */
export interface WriteOrigin {
  context: RequestContext;
  via?: Record<string, unknown>;
}

/**
 * A change planned from the user as it stands, its row locked: the fields to set. It may throw to refuse
 * (SCIM refuses an admin); `updatedAt` is set by the writer.
 */
export type ChangePlan = (current: UserSummarySource) => Omit<UserChanges, 'updatedAt'>;

export interface UserPage {
  users: UserAccount[];
  page: number;
  per_page: number;
  total: number;
}

@Injectable()
export class UsersService {
  private readonly logger = new Logger(UsersService.name);

  constructor(
    private readonly users: UsersRepository,
    private readonly userList: UserListRepository,
    private readonly bulk: UserBulkRepository,
    private readonly hasher: PasswordHasher,
    private readonly access: UserAccessCache,
    private readonly storage: StorageService,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly changeEvents: ChangeEventsService,
  ) {}

  /** A page of the admin list as JSON text (its users built by PostgreSQL, as the module list's are). */
  async list(filter: UserListFilter): Promise<JsonText<UserPage>> {
    const { itemsJson, total } = await this.userList.page(filter);
    return pageJsonText<UserPage>('users', itemsJson, filter.paging, total);
  }

  async create(dto: CreateUserDto, context: RequestContext): Promise<UserAccount> {
    const passwordHash = await this.hasher.hash(dto.password);
    return toUserAccount(await this.insert(newUser(dto, passwordHash), { context }));
  }

  /** Inserts one user: clashes answered as username, email, external id (409); audited, a `user.created` event. */
  async insert(user: NewUser, origin: WriteOrigin): Promise<UserSummarySource> {
    try {
      return await this.transactions.run(async (transaction) => {
        const clash = firstClash(await this.users.clashes(user, null, transaction));
        if (clash) throw clash;
        const created = await this.users.insert(user, transaction);
        await this.recordCreated(transaction, created, origin);
        return created;
      });
    } catch (error) {
      throw duplicateError(error) ?? error;
    }
  }

  /**
   * Inserts the user unless its username or email is taken (a concurrent insert of the same user included),
   * as single sign-on creates one: the new user, or null when nothing was inserted.
   */
  async insertUnlessTaken(user: NewUser, origin: WriteOrigin): Promise<UserSummarySource | null> {
    return this.transactions.run(async (transaction) => {
      const created = await this.users.insertUnlessTaken(user, transaction);
      if (created) await this.recordCreated(transaction, created, origin);
      return created;
    });
  }

  /** Binds the user to the IdP identity unless it is bound already (docs/sso.md, "Binding"); whether it was now. */
  bindSsoIdentity(id: number, issuer: string, subject: string): Promise<boolean> {
    return this.users.bindSsoIdentity(id, issuer, subject);
  }

  /** The first administrator, unless any user exists (instances starting together create one); whether created. */
  insertFirstAdmin(admin: Omit<NewUser, 'admin'>): Promise<boolean> {
    return this.users.insertFirstAdmin(admin);
  }

  /** The demo seed's generated users, set-based, in its transaction (UserBulkRepository.insertGenerated). */
  insertGenerated(
    generator: string,
    params: readonly unknown[],
    passwordHash: string,
    manager: Transaction,
  ): Promise<number> {
    return this.bulk.insertGenerated(generator, params, passwordHash, manager);
  }

  /** The demo seed's avatars (UserBulkRepository.setAvatarIfNone). */
  setAvatarIfNone(id: string, key: string, contentType: string): Promise<boolean> {
    return this.bulk.setAvatarIfNone(id, key, contentType);
  }

  /** The CSV import's set-based writes, in its transaction: the new users, then §14's fields of stored ones. */
  async importRows(
    newUsers: readonly NewUser[],
    updates: readonly { id: number; changes: Partial<PeopleFields> }[],
    manager: Transaction,
  ): Promise<{ created: UserSummarySource[]; updated: UserSummarySource[] }> {
    const created = newUsers.length > 0 ? await this.bulk.insertMany(newUsers, manager) : [];
    const updated =
      updates.length > 0 ? await this.bulk.updatePeopleFields(updates, new Date(), manager) : [];
    return { created, updated };
  }

  /** Points the user at a new avatar, in the caller's transaction (see UsersRepository.replaceAvatar). */
  replaceAvatar(id: string, key: string, contentType: string, manager: Transaction) {
    return this.users.replaceAvatar(id, key, contentType, new Date(), manager);
  }

  private async recordCreated(
    transaction: Transaction,
    created: UserSummarySource,
    origin: WriteOrigin,
  ): Promise<void> {
    await this.audit.record(transaction, origin.context, {
      action: 'user.create',
      targetType: 'user',
      targetIds: [created.id],
      summary: { ...nameOf(created), ...origin.via },
    });
    await this.changeEvents.record(transaction, [{ type: 'user.created', data: toUserAccount(created) }]);
  }

  /** All or nothing: one statement inserts the batch, after every clash has been listed up front. */
  async createMany(entries: readonly CreateUserDto[], context: RequestContext): Promise<UserAccount[]> {
    const clashes = await this.clashesWithStored(entries);
    if (clashes.length > 0) throw new DuplicateUsers(clashes);
    const hashes = await mapWithConcurrency(entries, HASH_CONCURRENCY, (entry) =>
      this.hasher.hash(entry.password),
    );
    let rows: Awaited<ReturnType<UserBulkRepository['insertMany']>>;
    try {
      rows = await this.transactions.run(async (transaction) => {
        const created = await this.bulk.insertMany(
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
          ordered.map((row) => ({ type: 'user.created', data: toUserAccount(row) })),
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
    return entries.map((entry) => toUserAccount(byUsername.get(entry.username.toLowerCase())!));
  }

  private async clashesWithStored(batch: readonly NewUserIdentity[]): Promise<string[]> {
    const stored = await this.bulk.storedIdentities(
      batch.map((entry) => entry.username),
      batch.map((entry) => entry.email),
    );
    return listClashes(batch, {
      usernames: new Set(stored.map((user) => user.username)),
      emails: new Set(stored.map((user) => user.email)),
    });
  }

  async get(id: string): Promise<UserAccount> {
    const user = await this.users.findById(id);
    if (!user) throw new UserNotFound();
    return toUserAccount(user);
  }

  async update(
    id: string,
    dto: UpdateUserDto,
    caller: AuthUser,
    context: RequestContext,
    precondition?: Precondition,
  ): Promise<UserAccount> {
    const { username, email, password, admin } = dto;
    const people = peopleFields(dto);
    if (
      username === undefined &&
      email === undefined &&
      password === undefined &&
      admin === undefined &&
      Object.keys(people).length === 0
    )
      throw new NothingToUpdate();
    if (!(await this.users.exists(id))) throw new UserNotFound();
    if (admin === false && String(caller.id) === id) throw new CannotDemoteSelf();
    if (people.active === false && String(caller.id) === id) throw new CannotDeactivateSelf();

    // Hashed first: the change's time is taken after the (slow) hash, so a token issued with the old password
    // while the hash was computed is still in an earlier second or the same one, never a later one.
    const passwordHash = password === undefined ? undefined : await this.hasher.hash(password);
    const changes: Omit<UserChanges, 'updatedAt'> = {
      username,
      email: email?.toLowerCase(),
      admin,
      ...people,
    };
    if (passwordHash !== undefined) {
      // Tokens issued in an earlier second than this are refused from now on (docs/api.md §2).
      changes.passwordHash = passwordHash;
      changes.passwordChangedAt = new Date();
    }
    const { user } = await this.change(
      id,
      () => changes,
      { context },
      { unchangedIsNoWrite: false, precondition },
    );
    return toUserAccount(user);
  }

  /**
   * The one way to change a user: its row is locked and read, `plan` says what to set from what is there, and
   * only that is written, so a concurrent change of other fields is never undone. Identity clashes → 409 (as
   * username, email, external id); audited as `user.update` with each changed field `{from, to}`; a
   * `user.updated` event. With `unchangedIsNoWrite` (SCIM), a plan that changes nothing writes nothing.
   */
  async change(
    id: string,
    plan: ChangePlan,
    origin: WriteOrigin,
    { unchangedIsNoWrite, precondition }: { unchangedIsNoWrite: boolean; precondition?: Precondition },
  ): Promise<{ user: UserSummarySource; changed: boolean }> {
    let result: { user: UserSummarySource; changed: boolean; written: Omit<UserChanges, 'updatedAt'> };
    try {
      result = await this.transactions.run(async (transaction) => {
        const before = await this.users.lockForUpdate(id, transaction);
        if (!before) throw new UserNotFound();
        // If-Match, against the user as it stands now that no other write can change it (docs/api.md §17).
        precondition?.(toUserAccount(before));
        const planned = plan(before);
        const summary: Record<string, unknown> = {};
        for (const [field, key] of AUDITED_FIELDS) {
          if (planned[key] !== undefined && planned[key] !== before[key])
            summary[field] = { from: before[key], to: planned[key] };
        }
        if (planned.passwordHash !== undefined) summary.password = 'changed';
        const written = unchangedIsNoWrite ? onlyChanged(planned, before) : planned;
        if (unchangedIsNoWrite && Object.keys(summary).length === 0)
          return { user: before, changed: false, written };
        if ('username' in summary || 'email' in summary || 'external_id' in summary) {
          const after = { ...before, ...stripUndefined(planned) };
          const clash = firstClash(await this.users.clashes(after, id, transaction));
          if (clash) throw clash;
        }
        const row = await this.users.update(
          id,
          { ...written, updatedAt: planned.passwordChangedAt ?? new Date() },
          transaction,
        );
        if (!row) throw new UserNotFound();
        await this.audit.record(transaction, origin.context, {
          action: 'user.update',
          targetType: 'user',
          targetIds: [id],
          summary: { ...summary, ...origin.via },
        });
        await this.changeEvents.record(transaction, [{ type: 'user.updated', data: toUserAccount(row) }]);
        return { user: row, changed: true, written };
      });
    } catch (error) {
      throw duplicateError(error) ?? error;
    }
    const { written } = result;
    if (written.passwordHash !== undefined || written.admin !== undefined || written.active !== undefined)
      this.access.invalidate(Number(id));
    return { user: result.user, changed: result.changed };
  }

  /**
   * Clears the user's single sign-on binding (docs/sso.md, "Binding"): the next IdP token that names the user
   * binds it again. Audited as `user.update`; the User summary's `updated_at` moves.
   */
  async clearSsoBinding(id: string, context: RequestContext): Promise<UserAccount> {
    const updated = await this.transactions.run(async (transaction) => {
      const row = await this.users.clearSsoBinding(id, new Date(), transaction);
      if (!row) return null;
      await this.audit.record(transaction, context, {
        action: 'user.update',
        targetType: 'user',
        targetIds: [id],
        summary: { sso_binding: 'removed' },
      });
      await this.changeEvents.record(transaction, [{ type: 'user.updated', data: toUserAccount(row) }]);
      return row;
    });
    if (!updated) throw new UserNotFound();
    return toUserAccount(updated);
  }

  /**
   * Binds the user to the IdP identity `(issuer, subject)` on purpose (docs/sso.md, "Linking an administrator"),
   * replacing any binding it had: the only way an admin gets bound. 409 when another user is bound to it.
   * Audited as `user.update` with the binding's `{from, to}`; the User summary's `updated_at` moves.
   */
  async setSsoBinding(
    id: string,
    issuer: string,
    subject: string,
    context: RequestContext,
  ): Promise<UserAccount> {
    if (!(await this.users.exists(id))) throw new UserNotFound();
    const holder = await this.users.idBySsoIdentity(issuer, subject);
    if (holder !== null && String(holder) !== id) throw new SsoIdentityTaken();
    let updated: UserSummarySource | null;
    try {
      updated = await this.transactions.run(async (transaction) => {
        const result = await this.users.setSsoBinding(id, issuer, subject, new Date(), transaction);
        if (!result) return null;
        await this.audit.record(transaction, context, {
          action: 'user.update',
          targetType: 'user',
          targetIds: [id],
          summary: { sso_binding: { from: result.before, to: { issuer, subject } } },
        });
        await this.changeEvents.record(transaction, [
          { type: 'user.updated', data: toUserAccount(result.user) },
        ]);
        return result.user;
      });
    } catch (error) {
      // Bound to another user meanwhile.
      if (violatedUniqueConstraint(error) === 'uq_users_sso_identity') throw new SsoIdentityTaken();
      throw error;
    }
    if (!updated) throw new UserNotFound();
    return toUserAccount(updated);
  }

  /**
   * Sets a user's own new password (already hashed) as of `changedAt`, audited as `auth.password_change`; tokens
   * issued before `changedAt` stop working (docs/security.md). Null when the user is gone.
   */
  async setPassword(
    id: number,
    passwordHash: string,
    changedAt: Date,
    context: RequestContext,
  ): Promise<UserSummarySource | null> {
    const updated = await this.transactions.run(async (transaction) => {
      const row = await this.users.update(
        String(id),
        { passwordHash, passwordChangedAt: changedAt, updatedAt: changedAt },
        transaction,
      );
      if (row) {
        await this.audit.record(transaction, context, {
          action: 'auth.password_change',
          targetType: 'user',
          targetIds: [id],
        });
        // The User summary's updated_at moved.
        await this.changeEvents.record(transaction, [{ type: 'user.updated', data: toUserAccount(row) }]);
      }
      return row;
    });
    if (updated) this.access.invalidate(id);
    return updated;
  }

  /** Deletes the user (role assignments go with it, by foreign key), then the avatar files. */
  async remove(
    id: string,
    caller: AuthUser,
    context: RequestContext,
    precondition?: Precondition,
  ): Promise<void> {
    await this.delete(
      id,
      (current) => {
        if (String(caller.id) === id) throw new CannotDeleteSelf();
        precondition?.(toUserAccount(current));
      },
      { context },
    );
  }

  /**
   * The one way to delete a user: its row locked and read, `check` may refuse (it sees the user as it stands),
   * then the delete, audited as `user.delete`, a `user.deleted` event; the avatar files go afterwards.
   */
  async delete(id: string, check: (current: UserSummarySource) => void, origin: WriteOrigin): Promise<void> {
    await this.transactions.run(async (transaction) => {
      const user = await this.users.lockForUpdate(id, transaction);
      if (!user) throw new UserNotFound();
      check(user);
      await this.users.delete(id, transaction);
      await this.audit.record(transaction, origin.context, {
        action: 'user.delete',
        targetType: 'user',
        targetIds: [id],
        summary: { username: user.username, ...origin.via },
      });
      await this.changeEvents.record(transaction, [
        { type: 'user.deleted', data: { id: Number(id), username: user.username } },
      ]);
    });
    this.access.invalidate(Number(id));
    await this.storage.remove(avatarFolder(id)).catch((error: unknown) => {
      // The user is gone either way; a leftover file is only disk space.
      this.logger.warn(`Could not remove the avatar of deleted user ${id}`, error);
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

/** A user update's audited fields: the `{field: {from, to}}` key, and the stored property. */
const AUDITED_FIELDS = [
  ['username', 'username'],
  ['email', 'email'],
  ['admin', 'admin'],
  ['given_name', 'givenName'],
  ['family_name', 'familyName'],
  ['display_name', 'displayName'],
  ['external_id', 'externalId'],
  ['active', 'active'],
] as const satisfies readonly (readonly [string, keyof UserChanges])[];

/** The §14 fields a body gives (null included: it clears a name or external_id), as stored properties. */
function peopleFields(dto: CreateUserDto | UpdateUserDto): Partial<PeopleFields> {
  const fields: Partial<PeopleFields> = {};
  if (dto.given_name !== undefined) fields.givenName = dto.given_name;
  if (dto.family_name !== undefined) fields.familyName = dto.family_name;
  if (dto.display_name !== undefined) fields.displayName = dto.display_name;
  if (dto.external_id !== undefined) fields.externalId = dto.external_id;
  if (dto.active !== undefined) fields.active = dto.active;
  return fields;
}

function newUser(dto: CreateUserDto, passwordHash: string): NewUser {
  return {
    username: dto.username,
    email: dto.email.toLowerCase(),
    passwordHash,
    admin: dto.admin ?? false,
    ...peopleFields(dto),
  };
}

/** The fields of `planned` that differ from the stored user's. */
function onlyChanged(
  planned: Omit<UserChanges, 'updatedAt'>,
  before: UserSummarySource,
): Omit<UserChanges, 'updatedAt'> {
  const stored = before as Partial<Record<string, unknown>>;
  return Object.fromEntries(
    Object.entries(planned).filter(([key, value]) => value !== undefined && value !== stored[key]),
  );
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}

/** The first identity another user holds, as username, email, external id (409). */
function firstClash(clashes: Clashes) {
  if (clashes.username) return new DuplicateUsername();
  if (clashes.email) return new DuplicateEmail();
  if (clashes.externalId) return new DuplicateExternalId();
  return undefined;
}

/** The 409 for a unique violation on username, email or external_id, or undefined for any other error. */
function duplicateError(
  error: unknown,
): DuplicateUsername | DuplicateEmail | DuplicateExternalId | undefined {
  const constraint = violatedUniqueConstraint(error);
  if (constraint === 'uq_users_username_lower') return new DuplicateUsername();
  if (constraint === 'uq_users_email_lower') return new DuplicateEmail();
  if (constraint === 'uq_users_external_id') return new DuplicateExternalId();
  return undefined;
}
