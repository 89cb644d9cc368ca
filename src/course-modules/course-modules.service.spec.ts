import { type AuditService } from '../audit/audit.service.js';
import { type Transaction, type Transactions } from '../database/transactions.js';
import { type NewChangeEvent } from '../events/change-event-types.js';
import { type ChangeEventsService } from '../events/change-events.service.js';
import { type UsersService } from '../users/users.service.js';
import { type CourseModulesRepository, type DeletedModules } from './course-modules.repository.js';
import { CourseModulesService } from './course-modules.service.js';
import { type ModuleFiles } from './module-files.js';
import { type ModuleRolesRepository } from './module-roles.repository.js';
import { ModuleTotals } from './module-totals.js';

/** A module repository over a fixed set of existing ids that records each bulk delete it is asked for. */
function fakeModules(existing: string[]) {
  const deletes: { ids: readonly string[]; transaction: Transaction }[] = [];
  const repository = {
    deleteWithDependents: (ids: readonly string[], transaction: Transaction): Promise<DeletedModules> => {
      deletes.push({ ids, transaction });
      const found = existing.filter((id) => ids.includes(id));
      return Promise.resolve({
        ids: found,
        modules: found.map((id) => ({ code: `CSC${id.padStart(3, '0').slice(-3)}`, year: 2026 })),
        storageKeys: found.map((id) => `elsewhere/${id}`),
      });
    },
  } as unknown as CourseModulesRepository;
  return { repository, deletes };
}

/** Runs the work with a marker transaction and counts the transactions opened. */
function fakeTransactions() {
  const marker = { transaction: true } as unknown as Transaction;
  const opened: Transaction[] = [];
  const transactions = {
    run: <T>(work: (transaction: Transaction) => Promise<T>) => {
      opened.push(marker);
      return work(marker);
    },
  } as unknown as Transactions;
  return { transactions, opened, marker };
}

function fakeFiles() {
  const removed: [readonly string[], readonly string[]][] = [];
  const files = {
    removeDeleted: (ids: readonly string[], keys: readonly string[]) => {
      removed.push([ids, keys]);
      return Promise.resolve();
    },
  } as unknown as ModuleFiles;
  return { files, removed };
}

const CONTEXT = { actorId: 1, requestId: 'test', clientIp: '127.0.0.1' };

/** Records the change events written, with the transaction they were written in. */
function fakeChangeEvents() {
  const recorded: { transaction: Transaction; events: readonly NewChangeEvent[] }[] = [];
  const changeEvents = {
    record: (transaction: Transaction, events: readonly NewChangeEvent[]) => {
      recorded.push({ transaction, events });
      return Promise.resolve();
    },
  } as unknown as ChangeEventsService;
  return { changeEvents, recorded };
}

function service(existing: string[]) {
  const modules = fakeModules(existing);
  const events = fakeChangeEvents();
  const tx = fakeTransactions();
  const storage = fakeFiles();
  const subject = new CourseModulesService(
    modules.repository,
    {} as ModuleRolesRepository,
    {} as UsersService,
    tx.transactions,
    storage.files,
    new ModuleTotals(),
    { record: () => Promise.resolve() } as unknown as AuditService,
    events.changeEvents,
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
