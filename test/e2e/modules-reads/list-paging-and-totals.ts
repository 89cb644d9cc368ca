// Part of test/modules-reads.e2e-spec.ts: the module list's paging, and its totals after writes made elsewhere.
import { makeModule, type ModuleRow } from '../../support/factories.js';
import { failure, ids, moduleJson } from '../../support/modules-fixtures.js';
import { type ModuleListContext } from './context.js';

export function listPagingAndTotalTests(ctx: ModuleListContext): void {
  const { app, list, listIds } = ctx;

  describe('paging', () => {
    let rows: ModuleRow[];

    beforeEach(async () => {
      rows = [];
      for (let i = 0; i < 7; i++) rows.push(await makeModule(app.dataSource, { year: 2025 }));
    });

    it('returns the requested page and the total of all matches', async () => {
      const res = await list('?page=2&per_page=3');
      expect(res.body.data).toEqual({
        modules: rows.slice(3, 6).map(moduleJson),
        page: 2,
        per_page: 3,
        total: 7,
      });
      expect((await list('?page=3&per_page=3')).body.data.modules).toEqual([moduleJson(rows[6])]);
    });

    it('answers a page past the end with no modules and the total', async () => {
      expect((await list('?page=4&per_page=3')).body.data).toEqual({
        modules: [],
        page: 4,
        per_page: 3,
        total: 7,
      });
      expect((await list('?page=2147483647&per_page=100')).body.data).toEqual({
        modules: [],
        page: 2147483647,
        per_page: 100,
        total: 7,
      });
    });

    it('clamps out-of-range numbers and reports the values in effect', async () => {
      const cases: [string, number, number][] = [
        ['?page=0', 1, 20],
        ['?page=-5', 1, 20],
        ['?per_page=0', 1, 1],
        ['?per_page=-3', 1, 1],
        ['?per_page=101', 1, 100],
        ['?per_page=1000000', 1, 100],
        ['?page=-2147483648&per_page=2147483647', 1, 100],
        ['?page=002&per_page=03', 2, 3],
      ];
      for (const [query, page, perPage] of cases) {
        const res = await list(query);
        expect([query, res.status, res.body.data.page, res.body.data.per_page]).toEqual([
          query,
          200,
          page,
          perPage,
        ]);
      }
      expect(ids((await list('?per_page=0')).body.data.modules)).toEqual([Number(rows[0].id)]);
    });

    it('rejects page and per_page that are not 32-bit integers, each with its message', async () => {
      for (const value of ['x', '1.5', '%2B1', '1e2', '', '4294967296', '2147483648', '0x10']) {
        expect((await list(`?page=${value}`)).body).toEqual(failure('page must be an integer'));
        expect((await list(`?per_page=${value}`)).body).toEqual(failure('per_page must be an integer'));
      }
      const both = await list('?page=a&per_page=b&year=c');
      expect(both.status).toBe(400);
      expect(both.body).toEqual(
        failure('page must be an integer; per_page must be an integer; year must be an integer'),
      );
    });

    it('keeps pages stable when sort values tie', async () => {
      const seen: number[] = [];
      for (let page = 1; page <= 3; page++)
        seen.push(...(await listIds(`?sort=-year&per_page=3&page=${page}`)));
      expect(seen).toEqual(ids(rows));
    });
  });

  // Totals come from module_stats (kept by triggers) or from a total remembered under its version: every write
  // to modules, from this process or from any other (here: straight SQL, as another replica would), must show.
  describe('totals after writes made elsewhere', () => {
    const total = async (query = '') => (await list(query)).body.data.total as number;
    const insert = (code: string, description: string | null) =>
      app.dataSource.query(
        `INSERT INTO modules (code, year, description, credits) VALUES ($1, 2026, $2, 10)`,
        [code, description],
      );

    it('follows inserts, updates, deletes and truncation, filtered or not', async () => {
      await insert('ABC101', 'Organic chemistry');
      await insert('ABC102', 'Inorganic chemistry');
      await insert('ABC103', 'Algebra');
      expect(await total()).toBe(3);
      expect(await total('?query=chemistry')).toBe(2);
      expect(await total('?query=chemistry')).toBe(2);

      await insert('ABC104', 'Physical chemistry');
      expect(await total()).toBe(4);
      expect(await total('?query=chemistry')).toBe(3);

      await app.dataSource.query(`UPDATE modules SET description = 'Geometry' WHERE code = 'ABC101'`);
      expect(await total('?query=chemistry')).toBe(2);
      expect(await total('?query=geometry')).toBe(1);

      await app.dataSource.query(`DELETE FROM modules WHERE code IN ('ABC102', 'ABC103')`);
      expect(await total()).toBe(2);
      expect(await total('?query=chemistry')).toBe(1);

      await app.dataSource.query(`TRUNCATE modules CASCADE`);
      expect(await total()).toBe(0);
      expect(await total('?query=chemistry')).toBe(0);
    });

    // module_stats is updated when a writing transaction commits (migration ModuleStatsAtCommit): what it
    // shows must follow the rows through open transactions, savepoints and rollbacks.
    it('moves the total and the version when a write commits, by what the committed statements did', async () => {
      const stats = async () =>
        (await app.dataSource.query(`SELECT total::int, version::int FROM module_stats`))[0] as {
          total: number;
          version: number;
        };
      await insert('ABC100', 'Before');
      const start = await stats();
      const runner = app.dataSource.createQueryRunner();
      await runner.connect();
      try {
        await runner.startTransaction();
        for (const code of ['ABC101', 'ABC102', 'ABC103'])
          await runner.query(`INSERT INTO modules (code, year, credits) VALUES ($1, 2026, 10)`, [code]);
        await runner.query(`SAVEPOINT later`);
        await runner.query(`INSERT INTO modules (code, year, credits) VALUES ('ABC104', 2026, 10)`);
        await runner.query(`ROLLBACK TO SAVEPOINT later`);
        await runner.query(`DELETE FROM modules WHERE code = 'ABC101'`);
        // Not committed yet: neither the rows nor the count show elsewhere.
        expect(await stats()).toEqual(start);
        expect(await total()).toBe(1);
        await runner.commitTransaction();
        expect(await stats()).toEqual({ total: start.total + 2, version: start.version + 1 });
        expect(await total()).toBe(3);

        await runner.startTransaction();
        await runner.query(`INSERT INTO modules (code, year, credits) VALUES ('ABC105', 2026, 10)`);
        await runner.rollbackTransaction();
        expect(await stats()).toEqual({ total: start.total + 2, version: start.version + 1 });

        // An update moves the version only; one that changes no row, nothing.
        await runner.query(`UPDATE modules SET credits = 20 WHERE code = 'ABC102'`);
        expect(await stats()).toEqual({ total: start.total + 2, version: start.version + 2 });
        await runner.query(`UPDATE modules SET credits = 20 WHERE code = 'NONE'`);
        expect(await stats()).toEqual({ total: start.total + 2, version: start.version + 2 });

        // Truncation counts at once; what the transaction writes after it, at the commit.
        await runner.startTransaction();
        await runner.query(`TRUNCATE modules CASCADE`);
        await runner.query(`INSERT INTO modules (code, year, credits) VALUES ('ABC107', 2026, 10)`);
        await runner.commitTransaction();
        expect((await stats()).total).toBe(1);
        expect(await total()).toBe(1);
      } finally {
        await runner.release();
      }
    });

    it('keeps the total of every filter apart, and of pages past the end', async () => {
      await insert('ABC101', 'Organic chemistry');
      await insert('XYZ201', 'Algebra');
      expect(await total('?code=abc')).toBe(1);
      expect(await total('?code=xyz')).toBe(1);
      expect(await total('?year=2026')).toBe(2);
      expect(await total('?year=2025')).toBe(0);
      expect((await list('?code=abc&page=9')).body.data).toEqual({
        modules: [],
        page: 9,
        per_page: 20,
        total: 1,
      });
      await insert('ABC102', null);
      expect((await list('?code=abc&page=9')).body.data).toEqual({
        modules: [],
        page: 9,
        per_page: 20,
        total: 2,
      });
    });
  });
}
