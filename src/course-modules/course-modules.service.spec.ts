import { type DataSource } from 'typeorm';
import { CourseModulesService } from './course-modules.service.js';
import { type ModuleFiles } from './module-files.js';
import { ModuleTotals } from './module-totals.js';

/** A data source that records each statement and answers like PostgreSQL would through TypeORM. */
function recordingDataSource(existing: string[]) {
  const statements: { sql: string; params: unknown[] }[] = [];
  const query = (sql: string, params: unknown[] = []) => {
    statements.push({ sql: sql.replace(/\s+/g, ' ').trim(), params });
    const requested = params[0] as string[];
    const found = existing.filter((id) => requested.includes(id));
    if (sql.includes('FOR UPDATE')) return Promise.resolve(found.map((id) => ({ id })));
    if (sql.includes('RETURNING storage_key'))
      return Promise.resolve([found.map((id) => ({ key: `elsewhere/${id}` })), 0]);
    return Promise.resolve([[], found.length]);
  };
  const dataSource = {
    transaction: (work: (manager: { query: typeof query }) => Promise<unknown>) => work({ query }),
  } as unknown as DataSource;
  return { dataSource, statements };
}

describe(CourseModulesService.name, () => {
  const files = () => {
    const removed: [string[], string[]][] = [];
    const fake = {
      removeDeleted: (ids: string[], keys: string[]) => {
        removed.push([ids, keys]);
        return Promise.resolve();
      },
    } as unknown as ModuleFiles;
    return { fake, removed };
  };

  it('deletes any number of modules with the same five set-based statements', async () => {
    const existing = Array.from({ length: 600 }, (_, i) => String(i + 1));
    for (const requested of [[1], existing.map(Number).concat([5000, 1])]) {
      const { dataSource, statements } = recordingDataSource(existing);
      const storage = files();
      const result = await new CourseModulesService(dataSource, storage.fake, new ModuleTotals()).bulkRemove(
        requested,
      );
      expect(statements.map((s) => s.sql.split(' WHERE')[0])).toEqual([
        'SELECT m.id::text AS id FROM modules m',
        'DELETE FROM assignment_files',
        'DELETE FROM assignments',
        'DELETE FROM user_module_roles',
        'DELETE FROM modules',
      ]);
      expect(statements.every((s) => s.sql.includes('= ANY($1::bigint[])'))).toBe(true);
      expect(result.deleted).toBe(Math.min(requested.length, 600));
      // Files go after the transaction, for the deleted modules only, with any key outside their folders.
      expect(storage.removed).toHaveLength(1);
      expect(storage.removed[0][0]).toHaveLength(result.deleted);
      expect(storage.removed[0][1][0]).toBe('elsewhere/1');
    }
  });

  it('stops after the locking read when no module exists', async () => {
    const { dataSource, statements } = recordingDataSource([]);
    const storage = files();
    const result = await new CourseModulesService(dataSource, storage.fake, new ModuleTotals()).bulkRemove([
      7, 8,
    ]);
    expect(statements).toHaveLength(1);
    expect(result.failed).toHaveLength(2);
    expect(storage.removed).toEqual([[[], []]]);
  });

  it('does not touch the database for ids that cannot exist', async () => {
    const { dataSource, statements } = recordingDataSource(['1']);
    const result = await new CourseModulesService(dataSource, files().fake, new ModuleTotals()).bulkRemove([
      0, -3,
    ]);
    expect(statements).toHaveLength(0);
    expect(result).toEqual({
      deleted: 0,
      failed: [
        { id: 0, error: 'Module not found' },
        { id: -3, error: 'Module not found' },
      ],
    });
  });
});
