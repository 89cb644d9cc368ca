import { type Transaction } from '../../database/transactions.js';
import { LocalFileStore } from '../../storage/local-file-store.js';
import { StorageService } from '../../storage/storage.service.js';
import {
  CONTEXT,
  DEFAULT_CONFIG,
  fakeWritePath,
  unconnectedRepository,
  unconnectedUsersService,
} from '../../testing/fakes.js';
import { CourseModule } from './course-module.entity.js';
import { CourseModulesRepository, type DeletedModules } from './course-modules.repository.js';
import { ModuleReadsRepository, type ModuleReadRow } from './module-reads.repository.js';
import { CourseModulesService, LARGE_READ_ROLE_ROWS } from './course-modules.service.js';
import { type AuthUser } from '../../core/decorators.js';
import { ModuleFiles } from './module-files.js';
import { ModuleTotals } from './module-totals.js';
import { AnswerBudget } from '../../core/answer-budget.js';

// The unit tier's one fake style: src/testing/fakes.ts. Collaborators the service does not call on these paths
// are real but unconnected, so a call to one fails.

/** A module repository over a fixed set of existing ids that records each bulk delete it is asked for. */
class FakeModules extends CourseModulesRepository {
  readonly deletes: { ids: readonly string[]; transaction: Transaction }[] = [];
  constructor(private readonly existing: string[]) {
    super(unconnectedRepository(CourseModule));
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

/** The single read of a module with `people` role rows; records each read's bound on role rows. */
class FakeModuleReads extends ModuleReadsRepository {
  /** The single reads asked for, by their bound on role rows. */
  readonly bounds: number[] = [];
  people = 0;

  constructor() {
    super(unconnectedRepository(CourseModule));
  }

  override withCallerRoleAndPersonnel(
    moduleId: string,
    callerId: number,
    admin: boolean,
    maxRoleRows = 2_147_483_647,
  ): Promise<ModuleReadRow | null> {
    this.bounds.push(maxRoleRows);
    const students = this.people <= maxRoleRows ? `{"id":${this.people}}` : '';
    return Promise.resolve({
      module: `{"id":${moduleId}}`,
      callerRole: null,
      roleRows: this.people,
      lecturers: '',
      assistants: '',
      tutors: '',
      students,
    });
  }
}

class FakeFiles extends ModuleFiles {
  readonly removed: [readonly string[], readonly string[]][] = [];

  constructor() {
    super(new StorageService(new LocalFileStore('/nonexistent')), new FakeModules([]));
  }

  override removeDeleted(ids: readonly string[], keys: readonly string[]): Promise<void> {
    this.removed.push([ids, keys]);
    return Promise.resolve();
  }
}

function service(existing: string[], budget = new AnswerBudget(DEFAULT_CONFIG.largeAnswerBudgetBytes)) {
  const modules = new FakeModules(existing);
  const reads = new FakeModuleReads();
  const { transactions, audit, events } = fakeWritePath();
  const storage = new FakeFiles();
  const subject = new CourseModulesService(
    modules,
    reads,
    unconnectedUsersService(),
    transactions,
    storage,
    new ModuleTotals(),
    audit,
    events,
    budget,
  );
  return { subject, modules, reads, transactions, storage, events, audit };
}

describe(CourseModulesService.name, () => {
  it('reads a small module in one statement, a large one again within the answer budget until it is sent', async () => {
    const budget = new AnswerBudget(10_000_000);
    const { subject, reads } = service([], budget);
    const admin: AuthUser = { id: 1, admin: true };
    reads.people = LARGE_READ_ROLE_ROWS;
    const small = await subject.read('7', admin);
    expect(reads.bounds).toEqual([LARGE_READ_ROLE_ROWS]);
    expect(small.sent).toBeUndefined();
    expect(small.parts.join('')).toContain(`"students":[{"id":${LARGE_READ_ROLE_ROWS}}]`);

    reads.bounds.length = 0;
    reads.people = 5000;
    const large = await subject.read('7', admin);
    expect(reads.bounds).toEqual([LARGE_READ_ROLE_ROWS, 2_147_483_647]);
    expect(large.parts.join('')).toContain('"students":[{"id":5000}]');
    expect(budget.state).toEqual({ used: 4_500_000, waiting: 0 });
    large.sent!();
    expect(budget.state).toEqual({ used: 0, waiting: 0 });
  });

  it('deletes the distinct candidate ids in one transaction, then their files', async () => {
    const existing = Array.from({ length: 600 }, (_, i) => String(i + 1));
    const { subject, modules, transactions, storage, events } = service(existing);
    const requested = existing.map(Number).concat([5000, 1]);
    const result = await subject.bulkRemove(requested, CONTEXT);
    expect(transactions.opened).toBe(1);
    expect(modules.deletes).toHaveLength(1);
    expect(modules.deletes[0].transaction).toBe(transactions.marker);
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
    expect(events.recorded[0].transaction).toBe(transactions.marker);
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
    const { subject, modules, transactions } = service(['1']);
    const result = await subject.bulkRemove([0, -3], CONTEXT);
    expect(modules.deletes).toHaveLength(0);
    expect(transactions.opened).toBe(0);
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
