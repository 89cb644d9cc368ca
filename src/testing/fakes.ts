import { DataSource, type EntityTarget, type ObjectLiteral, Repository } from 'typeorm';
import { type AuditEntry, type RequestContext } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { AuditService } from '../audit/audit.service.js';
import { type AppConfig, loadConfig } from '../config/app-config.js';
import { Clock } from '../core/clock.js';
import { Draining } from '../core/draining.js';
import { type Transaction, Transactions } from '../database/transactions.js';
import { type ChangeEventType, type NewChangeEvent } from '../events/change-event-types.js';
import { ChangeEventNotifications } from '../events/change-event-notifications.js';
import { ChangeEventsRepository } from '../events/change-events.repository.js';
import { ChangeFeedRepository } from '../events/change-feed.repository.js';
import { ChangeEventsService } from '../events/change-events.service.js';
import { Metrics } from '../observability/metrics.js';
import { LocalFileStore } from '../storage/local-file-store.js';
import { StorageService } from '../storage/storage.service.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { UserAccessCache } from '../users/user-access.cache.js';
import { User } from '../users/user.entity.js';
import { UserBulkRepository } from '../users/user-bulk.repository.js';
import { UserListRepository } from '../users/user-list.repository.js';
import { UsersRepository } from '../users/users.repository.js';
import { UsersService } from '../users/users.service.js';

/*
 * The unit tier's one fake style (docs/testing.md): a fake is a subclass of the real class that overrides the
 * methods a service calls, with `override`, and records what it was asked. A signature change in the real class
 * then fails to compile here. The collaborators' own dependencies are real but built on a data source that is
 * never initialized, so a call that was not faked fails instead of reaching a database. Only unit specs import
 * this folder (.dependency-cruiser.cjs); the build leaves it out (tsconfig.build.json).
 */

/** A PostgreSQL data source that is never initialized: what the fakes' real parents are built on. */
export const NO_DATABASE = new DataSource({ type: 'postgres' });

/** The entity's TypeORM repository on {@link NO_DATABASE}: what a fake of one of the service's repositories extends. */
export const unconnectedRepository = <Entity extends ObjectLiteral>(entity: EntityTarget<Entity>) =>
  new Repository(entity, NO_DATABASE.manager);

/** The configuration with every setting at its default. */
export const DEFAULT_CONFIG: AppConfig = loadConfig({});

/** The request context the specs pass (admin 1). */
export const CONTEXT: RequestContext = { actorId: 1, requestId: 'req-1', clientIp: '127.0.0.1' };

/**
 * Runs the work with one marker transaction (a real, unconnected EntityManager, only ever compared by identity),
 * counting the transactions opened, those opened for long work, and those that ended in an error.
 */
export class FakeTransactions extends Transactions {
  opened = 0;
  long = 0;
  failed = 0;

  constructor(readonly marker: Transaction = new DataSource({ type: 'postgres' }).manager) {
    super(NO_DATABASE, DEFAULT_CONFIG);
  }

  override run<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return this.open(work);
  }

  override runLong<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    this.long++;
    return this.open(work);
  }

  private async open<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    this.opened++;
    try {
      return await work(this.marker);
    } catch (error) {
      this.failed++;
      throw error;
    }
  }
}

/** Records the audit entries, with the transaction (undefined: written on its own) and context of each. */
export class FakeAudit extends AuditService {
  readonly entries: { transaction: Transaction | undefined; context: RequestContext; entry: AuditEntry }[] =
    [];

  constructor() {
    super(new AuditRepository(NO_DATABASE), DEFAULT_CONFIG);
  }

  override record(
    transaction: Transaction | undefined,
    context: RequestContext,
    entry: AuditEntry,
  ): Promise<void> {
    this.entries.push({ transaction, context, entry });
    return Promise.resolve();
  }

  /** The entries alone, in the order recorded. */
  get recorded(): AuditEntry[] {
    return this.entries.map(({ entry }) => entry);
  }
}

/** Records the change events of each `record` call with its transaction, and the counts noted as written. */
export class FakeChangeEvents extends ChangeEventsService {
  readonly recorded: { transaction: Transaction; events: readonly NewChangeEvent[] }[] = [];
  readonly noted: { transaction: Transaction; written: ReadonlyMap<ChangeEventType, number> }[] = [];

  constructor() {
    super(
      new ChangeEventsRepository(NO_DATABASE),
      new ChangeFeedRepository(NO_DATABASE),
      new ChangeEventNotifications(NO_DATABASE),
      new Draining(),
      new Metrics(DEFAULT_CONFIG, NO_DATABASE),
      DEFAULT_CONFIG,
      new Transactions(NO_DATABASE, DEFAULT_CONFIG),
    );
  }

  override record(transaction: Transaction, events: readonly NewChangeEvent[]): Promise<void> {
    this.recorded.push({ transaction, events });
    return Promise.resolve();
  }

  override noteWritten(transaction: Transaction, written: ReadonlyMap<ChangeEventType, number>): void {
    this.noted.push({ transaction, written });
  }

  /** Every event recorded, in order, whatever call wrote it. */
  get allEvents(): NewChangeEvent[] {
    return this.recorded.flatMap(({ events }) => events);
  }
}

/**
 * What every write of a service goes through, faked: the transaction it runs in (`marker`, or a fresh one), the
 * audit entries and the change events it records there.
 */
export function fakeWritePath(marker?: Transaction) {
  return {
    transactions: new FakeTransactions(marker),
    audit: new FakeAudit(),
    events: new FakeChangeEvents(),
  };
}

/** When {@link storedUser}'s users were created and last updated. */
export const STORED_AT = new Date('2026-01-01T00:00:00.000Z');

/** A users row as the repository reads it: active, no password, no names, not an admin, unless overridden. */
export function storedUser(id: number, username: string, overrides: Partial<User> = {}): User {
  return {
    id,
    username,
    email: `${username}@example.edu`,
    givenName: null,
    familyName: null,
    displayName: null,
    externalId: null,
    active: true,
    passwordHash: null,
    admin: false,
    passwordChangedAt: STORED_AT,
    avatarKey: null,
    avatarContentType: null,
    ssoIssuer: null,
    ssoSubject: null,
    createdAt: STORED_AT,
    updatedAt: STORED_AT,
    ...overrides,
  };
}

/** Records the users whose cached access check was dropped. */
export class FakeAccessCache extends UserAccessCache {
  readonly invalidated: number[] = [];

  constructor() {
    super(unconnectedUsersRepository(), DEFAULT_CONFIG, new Clock());
  }

  override invalidate(userId: number): void {
    this.invalidated.push(userId);
  }
}

/** A users repository on the unconnected data source: every call fails; fakes subclass it. */
export const unconnectedUsersRepository = (): UsersRepository =>
  new UsersRepository(unconnectedRepository(User));

/** The list and the set-based users repositories on the unconnected data source, likewise. */
export const unconnectedUserList = (): UserListRepository =>
  new UserListRepository(NO_DATABASE, DEFAULT_CONFIG);
export const unconnectedUserBulk = (): UserBulkRepository =>
  new UserBulkRepository(unconnectedRepository(User));

/** A file store that was never given a folder to write to: fakes subclass the storage service over it. */
export const unusedFileStorage = (): StorageService => new StorageService(new LocalFileStore('/nonexistent'));

/** A real UsersService on unconnected collaborators, for services that hold one but do not call it in a spec. */
export function unconnectedUsersService(): UsersService {
  const users = unconnectedUsersRepository();
  return new UsersService(
    users,
    unconnectedUserList(),
    unconnectedUserBulk(),
    new PasswordHasher(),
    new UserAccessCache(users, DEFAULT_CONFIG, new Clock()),
    unusedFileStorage(),
    new Transactions(NO_DATABASE, DEFAULT_CONFIG),
    new AuditService(new AuditRepository(NO_DATABASE), DEFAULT_CONFIG),
    new FakeChangeEvents(),
  );
}
