import { QueryFailedError } from 'typeorm';
import { type AuthUser } from '../core/decorators.js';
import { type Transaction } from '../database/transactions.js';
import { StorageService } from '../storage/storage.service.js';
import {
  CONTEXT,
  DEFAULT_CONFIG,
  fakeWritePath,
  NO_DATABASE,
  unconnectedRepository,
  storedUser,
  FakeAccessCache,
  unusedFileStorage,
} from '../testing/fakes.js';
import { PasswordHasher } from './password-hasher.js';
import { User as UserEntity, type User } from './user.entity.js';
import { type StoredIdentity } from './user-import.js';
import { type UserListFilter } from './user-list-filter.js';
import { toUserAccount, type UserSummarySource } from './user.mapper.js';
import { UserBulkRepository } from './user-bulk.repository.js';
import { UserListRepository, type UserPageJson } from './user-list.repository.js';
import { type Clashes, type NewUser, type UserChanges, UsersRepository } from './users.repository.js';
import { type UserPage, UsersService } from './users.service.js';

// The unit tier's one fake style: src/testing/fakes.ts.

const ADMIN: AuthUser = { id: 1, admin: true };

/** Stored emails are lower-case, as the service writes them. */
const user = (id: number, username: string, overrides: Partial<User> = {}): User =>
  storedUser(id, username, { email: `${username.toLowerCase()}@example.edu`, ...overrides });

/** A unique violation as PostgreSQL reports it through TypeORM. */
const uniqueViolation = (constraint: string) =>
  new QueryFailedError(
    'INSERT',
    [],
    Object.assign(new Error('duplicate key'), { code: '23505', constraint }),
  );

/** The users table in memory; `clash` makes the next write fail on that unique constraint. */
class FakeUsers extends UsersRepository {
  readonly rows: User[];
  readonly writes: { kind: string; transaction: Transaction | undefined }[] = [];
  clash: string | undefined;

  /** The row is gone when the update runs (deleted meanwhile). */
  deletedBeforeUpdate = false;

  constructor(rows: User[]) {
    super(unconnectedRepository(UserEntity));
    this.rows = rows;
  }

  private failIfClash(): void {
    const constraint = this.clash;
    this.clash = undefined;
    if (constraint !== undefined) throw uniqueViolation(constraint);
  }

  override findById(id: string | number): Promise<User | null> {
    const row = this.rows.find((candidate) => candidate.id === Number(id));
    // A copy, as each read from the database is.
    return Promise.resolve(row ? { ...row } : null);
  }

  override exists(id: string | number): Promise<boolean> {
    return Promise.resolve(this.rows.some((candidate) => candidate.id === Number(id)));
  }

  override lockForUpdate(id: string, manager: Transaction): Promise<UserSummarySource | null> {
    this.writes.push({ kind: 'lock', transaction: manager });
    if (this.deletedBeforeUpdate) return Promise.resolve(null);
    return this.findById(id);
  }

  /** Clashes show up as unique violations (`clash`), as when another request wins the race. */
  override clashes(): Promise<Clashes> {
    return Promise.resolve({ username: false, email: false, externalId: false });
  }

  override insert(created: NewUser, manager?: Transaction): Promise<UserSummarySource> {
    this.writes.push({ kind: 'insert', transaction: manager });
    this.failIfClash();
    const row = user(this.rows.length + 100, created.username, { ...created });
    this.rows.push(row);
    return Promise.resolve(row);
  }

  override update(
    id: string,
    changes: UserChanges,
    manager?: Transaction,
  ): Promise<UserSummarySource | null> {
    this.writes.push({ kind: 'update', transaction: manager });
    this.failIfClash();
    const row = this.rows.find((candidate) => candidate.id === Number(id));
    if (!row || this.deletedBeforeUpdate) return Promise.resolve(null);
    const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
    Object.assign(row, defined);
    return Promise.resolve({ ...row });
  }

  override delete(id: string, manager?: Transaction): Promise<boolean> {
    this.writes.push({ kind: 'delete', transaction: manager });
    const index = this.rows.findIndex((row) => row.id === Number(id));
    if (index >= 0) this.rows.splice(index, 1);
    return Promise.resolve(index >= 0);
  }
}

/** The list's reads over FakeUsers' rows: the first row as PostgreSQL writes it, and the filters asked for. */
class FakeUserList extends UserListRepository {
  readonly pages: UserListFilter[] = [];

  constructor(private readonly table: FakeUsers) {
    super(NO_DATABASE, DEFAULT_CONFIG);
  }

  override page(filter: UserListFilter): Promise<UserPageJson> {
    this.pages.push(filter);
    const itemsJson = this.table.rows
      .slice(0, 1)
      .map((row) => JSON.stringify(toUserAccount(row)))
      .join(',');
    return Promise.resolve({ itemsJson, total: this.table.rows.length });
  }
}

/** The set-based reads over FakeUsers' rows. */
class FakeUserBulk extends UserBulkRepository {
  constructor(private readonly table: FakeUsers) {
    super(unconnectedRepository(UserEntity));
  }

  override storedIdentities(
    usernames: readonly string[],
    emails: readonly string[],
  ): Promise<StoredIdentity[]> {
    const lower = (values: readonly string[]) => values.map((value) => value.toLowerCase());
    return Promise.resolve(
      this.table.rows
        .filter(
          (row) => lower(usernames).includes(row.username.toLowerCase()) || lower(emails).includes(row.email),
        )
        .map(({ id, username, email, givenName, familyName, displayName, externalId, active }) => ({
          id,
          username: username.toLowerCase(),
          email,
          givenName,
          familyName,
          displayName,
          externalId,
          active,
        })),
    );
  }
}

/** A hash is `hash:<password>`; counts the hashes made. */
class FakeHasher extends PasswordHasher {
  hashed: string[] = [];

  override hash(password: string): Promise<string> {
    this.hashed.push(password);
    return Promise.resolve(`hash:${password}`);
  }
}

/** Records the folders removed; `failing` makes removal fail as a file store can. */
class FakeStorage extends StorageService {
  readonly removed: string[] = [];
  failing = false;

  constructor() {
    super(unusedFileStorage().store);
  }

  override remove(key: string): Promise<void> {
    if (this.failing) return Promise.reject(new Error('EACCES'));
    this.removed.push(key);
    return Promise.resolve();
  }
}

// One hasher for the file: its parent hashes a decoy password with argon2 when it is made.
const hasher = new FakeHasher();

function setUp() {
  hasher.hashed = [];
  const users = new FakeUsers([user(1, 'admin', { admin: true }), user(7, 'Jane', { givenName: 'Jane' })]);
  const access = new FakeAccessCache();
  const storage = new FakeStorage();
  const { transactions, audit, events } = fakeWritePath();
  const list = new FakeUserList(users);
  const service = new UsersService(
    users,
    list,
    new FakeUserBulk(users),
    hasher,
    access,
    storage,
    transactions,
    audit,
    events,
  );
  return { service, users, list, access, storage, transactions, audit, events };
}

describe(UsersService.name, () => {
  it('lists the page the typed filter asks for, answering the paging in effect', async () => {
    const { service, list } = setUp();
    const filter: UserListFilter = {
      admin: false,
      sort: [{ column: 'u.email', descending: true }],
      paging: { page: 3, perPage: 1, offset: 2 },
    };
    const text = await service.list(filter);
    expect(list.pages).toEqual([filter]);
    expect(text.page).toEqual({ page: 3, per_page: 1, total: 2 });
    const page = JSON.parse(text.parts.join('')) as UserPage;
    expect(page).toMatchObject({ page: 3, per_page: 1, total: 2 });
    expect(page.users.map((account) => account.username)).toEqual(['admin']);
    expect(page.users[0]).not.toHaveProperty('passwordHash');
  });

  describe('create', () => {
    it('stores the hash and the lower-cased email, and records the audit entry and user.created in one transaction', async () => {
      const { service, users, transactions, audit, events } = setUp();
      const created = await service.create(
        { username: 'Ada', email: 'Ada@Example.EDU', password: 'correct horse', admin: true },
        CONTEXT,
      );
      expect(created).toMatchObject({ username: 'Ada', email: 'ada@example.edu', admin: true });
      expect(users.rows.at(-1)).toMatchObject({
        passwordHash: 'hash:correct horse',
        email: 'ada@example.edu',
      });
      expect(hasher.hashed).toEqual(['correct horse']);
      expect(transactions.opened).toBe(1);
      expect(users.writes).toEqual([{ kind: 'insert', transaction: transactions.marker }]);
      expect(audit.entries).toEqual([
        {
          transaction: transactions.marker,
          context: CONTEXT,
          entry: {
            action: 'user.create',
            targetType: 'user',
            targetIds: [created.id],
            summary: { username: 'Ada', admin: true },
          },
        },
      ]);
      expect(events.recorded).toEqual([
        { transaction: transactions.marker, events: [{ type: 'user.created', data: created }] },
      ]);
    });

    it.each([
      ['uq_users_username_lower', 'A user with this username already exists'],
      ['uq_users_email_lower', 'A user with this email already exists'],
      ['uq_users_external_id', 'A user with this external ID already exists'],
    ])('answers 409 for a clash on %s', async (constraint, message) => {
      const { service, users, audit } = setUp();
      users.clash = constraint;
      await expect(
        service.create({ username: 'ada', email: 'ada@example.edu', password: 'pw-12345678' }, CONTEXT),
      ).rejects.toMatchObject({ status: 409, message });
      expect(audit.entries).toEqual([]);
    });

    it('lets any other database error through as it is', async () => {
      const { service, users } = setUp();
      users.clash = 'some_other_constraint';
      await expect(
        service.create({ username: 'ada', email: 'ada@example.edu', password: 'pw-12345678' }, CONTEXT),
      ).rejects.toBeInstanceOf(QueryFailedError);
    });

    it('lists every clash of a batch with stored users before hashing any password', async () => {
      const { service, transactions } = setUp();
      await expect(
        service.createMany(
          [
            { username: 'JANE', email: 'new@example.edu', password: 'pw-12345678' },
            { username: 'newer', email: 'Admin@example.edu', password: 'pw-12345678' },
          ],
          CONTEXT,
        ),
      ).rejects.toMatchObject({ status: 409, message: expect.stringContaining('JANE') as unknown });
      expect(hasher.hashed).toEqual([]);
      expect(transactions.opened).toBe(0);
    });
  });

  describe('update', () => {
    it('answers 400 for an empty change and 404 for an unknown user, before anything else', async () => {
      const { service, users } = setUp();
      await expect(service.update('7', {}, ADMIN, CONTEXT)).rejects.toMatchObject({ status: 400 });
      await expect(
        service.update('99', { admin: false }, { id: 99, admin: true }, CONTEXT),
      ).rejects.toMatchObject({
        status: 404,
        message: 'User not found',
      });
      expect(users.writes).toEqual([]);
    });

    it('refuses an admin demoting or deactivating themself with 403, changing nothing', async () => {
      const { service, users } = setUp();
      await expect(service.update('1', { admin: false }, ADMIN, CONTEXT)).rejects.toMatchObject({
        status: 403,
      });
      await expect(service.update('1', { active: false }, ADMIN, CONTEXT)).rejects.toMatchObject({
        status: 403,
      });
      expect(users.writes).toEqual([]);
      // Another admin may.
      await expect(
        service.update('1', { admin: false }, { id: 2, admin: true }, CONTEXT),
      ).resolves.toMatchObject({
        admin: false,
      });
    });

    it('audits only the fields that changed, a password as "changed", and refreshes the access check', async () => {
      const { service, users, access, audit, events, transactions } = setUp();
      const updated = await service.update(
        '7',
        { email: 'JANE@example.edu', given_name: 'Janet', password: 'a-new-password' },
        ADMIN,
        CONTEXT,
      );
      expect(updated).toMatchObject({ email: 'jane@example.edu', given_name: 'Janet' });
      expect(users.rows[1]).toMatchObject({ passwordHash: 'hash:a-new-password' });
      expect(users.rows[1].passwordChangedAt).toBe(users.rows[1].updatedAt);
      expect(audit.recorded).toEqual([
        {
          action: 'user.update',
          targetType: 'user',
          targetIds: ['7'],
          summary: { given_name: { from: 'Jane', to: 'Janet' }, password: 'changed' },
        },
      ]);
      expect(events.recorded).toEqual([
        { transaction: transactions.marker, events: [{ type: 'user.updated', data: updated }] },
      ]);
      expect(access.invalidated).toEqual([7]);
    });

    it('keeps the cached access check for a change that does not touch it', async () => {
      const { service, access } = setUp();
      await service.update('7', { display_name: 'J.' }, ADMIN, CONTEXT);
      expect(access.invalidated).toEqual([]);
    });

    it('answers 404 when the user is deleted before the write', async () => {
      const { service, users, audit } = setUp();
      users.deletedBeforeUpdate = true;
      await expect(service.update('7', { admin: true }, ADMIN, CONTEXT)).rejects.toMatchObject({
        status: 404,
      });
      expect(audit.entries).toEqual([]);
    });
  });

  describe('change', () => {
    it('plans from the locked row and, asked to, writes only what differs (nothing: no audit, no event)', async () => {
      const { service, users, audit, events, transactions } = setUp();
      const seen: string[] = [];
      const plan = (current: UserSummarySource) => {
        seen.push(current.username);
        return { username: 'Jane', displayName: 'J.' };
      };
      const { changed } = await service.change(
        '7',
        plan,
        { context: CONTEXT, via: { via: 'scim' } },
        {
          unchangedIsNoWrite: true,
        },
      );
      expect(changed).toBe(true);
      expect(seen).toEqual(['Jane']);
      expect(users.writes.map((write) => [write.kind, write.transaction])).toEqual([
        ['lock', transactions.marker],
        ['update', transactions.marker],
      ]);
      expect(audit.recorded).toEqual([
        {
          action: 'user.update',
          targetType: 'user',
          targetIds: ['7'],
          summary: { display_name: { from: null, to: 'J.' }, via: 'scim' },
        },
      ]);
      const again = await service.change('7', plan, { context: CONTEXT }, { unchangedIsNoWrite: true });
      expect(again.changed).toBe(false);
      expect(audit.recorded).toHaveLength(1);
      expect(events.recorded).toHaveLength(1);
    });
  });

  describe('remove', () => {
    it('deletes the user, records it, forgets their access and then removes their avatar folder', async () => {
      const { service, users, access, storage, audit, events, transactions } = setUp();
      await service.remove('7', ADMIN, CONTEXT);
      expect(users.rows.map((row) => row.id)).toEqual([1]);
      expect(users.writes).toEqual([
        { kind: 'lock', transaction: transactions.marker },
        { kind: 'delete', transaction: transactions.marker },
      ]);
      expect(audit.recorded).toEqual([
        { action: 'user.delete', targetType: 'user', targetIds: ['7'], summary: { username: 'Jane' } },
      ]);
      expect(events.allEvents).toEqual([{ type: 'user.deleted', data: { id: 7, username: 'Jane' } }]);
      expect(access.invalidated).toEqual([7]);
      expect(storage.removed).toEqual(['avatars/7']);
    });

    it('answers 404 for an unknown user and 403 for the caller themself, deleting nothing', async () => {
      const { service, users } = setUp();
      await expect(service.remove('99', ADMIN, CONTEXT)).rejects.toMatchObject({ status: 404 });
      await expect(service.remove('1', ADMIN, CONTEXT)).rejects.toMatchObject({ status: 403 });
      expect(users.writes.filter((write) => write.kind !== 'lock')).toEqual([]);
    });

    it('still succeeds when the avatar folder cannot be removed', async () => {
      const { service, storage, users } = setUp();
      storage.failing = true;
      await expect(service.remove('7', ADMIN, CONTEXT)).resolves.toBeUndefined();
      expect(users.rows).toHaveLength(1);
    });
  });
});
