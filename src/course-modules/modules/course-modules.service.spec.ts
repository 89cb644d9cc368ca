import { DataSource, Repository } from 'typeorm';
import { AuditRepository } from '../../audit/audit.repository.js';
import { AuditService } from '../../audit/audit.service.js';
import { loadConfig } from '../../config/app-config.js';
import { Draining } from '../../core/draining.js';
import { type Transaction, Transactions } from '../../database/transactions.js';
import { type NewChangeEvent } from '../../events/change-event-types.js';
import { ChangeEventNotifications } from '../../events/change-event-notifications.js';
import { ChangeEventsRepository } from '../../events/change-events.repository.js';
import { ChangeEventsService } from '../../events/change-events.service.js';
import { Metrics } from '../../observability/metrics.js';
import { LocalFileStore } from '../../storage/local-file-store.js';
import { StorageService } from '../../storage/storage.service.js';
import { type UsersService } from '../../users/users.service.js';
import { CourseModule } from './course-module.entity.js';
import { CourseModulesRepository, type DeletedModules } from './course-modules.repository.js';
import { CourseModulesService } from './course-modules.service.js';
import { ModuleFiles } from './module-files.js';
import { type ModuleRolesRepository } from '../membership/module-roles.repository.js';
import { ModuleTotals } from './module-totals.js';

/*
 * The service takes its collaborators as classes, so each fake is a subclass overriding the one method the
 * service calls; the collaborators' own dependencies are real but never reach a database (the data source is
 * never initialized, so a call that was not faked fails).
 */
const dataSource = new DataSource({ type: 'postgres' });
const config = loadConfig({});

/** A module repository over a fixed set of existing ids that records each bulk delete it is asked for. */
class FakeModules extends CourseModulesRepository {
  readonly deletes: { ids: readonly string[]; transaction: Transaction }[] = [];

  constructor(private readonly existing: string[]) {
    super(new Repository(CourseModule, dataSource.manager));
  }

  override deleteWithDependents(ids: readonly string[], transaction: Transaction): Promise<DeletedModules> {
    this.deletes.push({ ids, transaction });
    const found = this.existing.filter((id) => ids.includes(id));
    return Promise.resolve({
      ids: found,
      modules: found.map((id) => ({ code: `CSC${id.padStart(3, '0').slice(-3)}`, year: 2026 })),
      storageKeys: found.map((id) => `elsewhere/${id}`),
    });
  }
}

/** Runs the work with a marker transaction and counts the transactions opened. */
class FakeTransactions extends Transactions {
  readonly marker: Transaction = new DataSource({ type: 'postgres' }).manager;
  readonly opened: Transaction[] = [];

  constructor() {
    super(dataSource, config);
  }

  override run<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    this.opened.push(this.marker);
    return work(this.marker);
  }
}

class FakeFiles extends ModuleFiles {
  readonly removed: [readonly string[], readonly string[]][] = [];

  constructor() {
    super(new StorageService(new LocalFileStore('/nonexistent')), new FakeModules([]), config);
  }

  override removeDeleted(ids: readonly string[], keys: readonly string[]): Promise<void> {
    this.removed.push([ids, keys]);
    return Promise.resolve();
  }
}

class SilentAudit extends AuditService {
  constructor() {
    super(new AuditRepository(dataSource), config);
  }

  override record(): Promise<void> {
    return Promise.resolve();
  }
}

/** Records the change events written, with the transaction they were written in. */
class FakeChangeEvents extends ChangeEventsService {
  readonly recorded: { transaction: Transaction; events: readonly NewChangeEvent[] }[] = [];

  constructor() {
    super(
      new ChangeEventsRepository(dataSource),
      new ChangeEventNotifications(dataSource),
      new Draining(),
      new Metrics(config, dataSource),
      config,
      new Transactions(dataSource, config),
    );
  }

  override record(transaction: Transaction, events: readonly NewChangeEvent[]): Promise<void> {
    this.recorded.push({ transaction, events });
    return Promise.resolve();
  }
}

const CONTEXT = { actorId: 1, requestId: 'test', clientIp: '127.0.0.1' };

function service(existing: string[]) {
  const modules = new FakeModules(existing);
  const events = new FakeChangeEvents();
  const tx = new FakeTransactions();
  const storage = new FakeFiles();
  const subject = new CourseModulesService(
    modules,
    {} as ModuleRolesRepository,
    {} as UsersService,
    tx,
    storage,
    new ModuleTotals(),
    new SilentAudit(),
    events,
  );
  return { subject, modules, tx, storage, events };
}

describe(CourseModulesService.name, () => {
  it('deletes the distinct candidate ids in one transaction, then their files', async () => {
    const existing = Array.from({ length: 600 }, (_, i) => String(i + 1));
    const { subject, modules, tx, storage, events } = service(existing);
    const requested = existing.map(Number).concat([5000, 1]);
    const result = await subject.bulkRemove(requested, CONTEXT);
    expect(tx.opened).toHaveLength(1);
    expect(modules.deletes).toHaveLength(1);
    expect(modules.deletes[0].transaction).toBe(tx.marker);
    expect(modules.deletes[0].ids).toEqual([...existing, '5000']);
    expect(result.deleted).toBe(600);
    expect(result.failed).toEqual([
      { id: 5000, error: 'Module not found' },
      { id: 1, error: 'Duplicate module ID' },
    ]);
    // Files go after the transaction, for the deleted modules only, with any key outside their folders.
    expect(storage.removed).toHaveLength(1);
    expect(storage.removed[0][0]).toHaveLength(600);
    expect(storage.removed[0][1][0]).toBe('elsewhere/1');
    // One module.deleted per deleted module, written in the delete's transaction with one call.
    expect(events.recorded).toHaveLength(1);
    expect(events.recorded[0].transaction).toBe(tx.marker);
    expect(events.recorded[0].events).toHaveLength(600);
    expect(events.recorded[0].events[41]).toEqual({
      type: 'module.deleted',
      data: { id: 42, code: 'CSC042', year: 2026 },
    });
  });

  it('reports every id as not found when none exists', async () => {
    const { subject, storage, events } = service([]);
    const result = await subject.bulkRemove([7, 8], CONTEXT);
    expect(events.recorded).toEqual([]);
    expect(result.failed).toEqual([
      { id: 7, error: 'Module not found' },
      { id: 8, error: 'Module not found' },
    ]);
    expect(storage.removed).toEqual([[[], []]]);
  });

  it('does not touch the database for ids that cannot exist', async () => {
    const { subject, modules, tx } = service(['1']);
    const result = await subject.bulkRemove([0, -3], CONTEXT);
    expect(modules.deletes).toHaveLength(0);
    expect(tx.opened).toHaveLength(0);
    expect(result).toEqual({
      deleted: 0,
      failed: [
        { id: 0, error: 'Module not found' },
        { id: -3, error: 'Module not found' },
      ],
    });
  });

  it('answers 404 for a single delete of a module that does not exist', async () => {
    const { subject } = service(['1']);
    await expect(subject.remove('2', CONTEXT)).rejects.toMatchObject({ message: 'Module not found' });
    await expect(subject.remove('1', CONTEXT)).resolves.toBeUndefined();
  });
});
