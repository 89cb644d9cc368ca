// Part of test/modules-reads.e2e-spec.ts: the module list's filters and sort.
import { makeModule, type ModuleRow } from '../../support/factories.js';
import { failure, ids, INVALID_SORT, moduleJson } from '../../support/modules-fixtures.js';
import { type ModuleListContext } from './context.js';

export function listFilterAndSortTests(ctx: ModuleListContext): void {
  const { app, list, listIds } = ctx;

  describe('filters', () => {
    let software: ModuleRow;
    let security: ModuleRow;
    let maths: ModuleRow;
    let noDescription: ModuleRow;

    beforeEach(async () => {
      software = await makeModule(app.dataSource, {
        code: 'CSC101',
        year: 2025,
        description: 'Software Engineering',
      });
      security = await makeModule(app.dataSource, {
        code: 'CSC202',
        year: 2026,
        description: 'Network security',
      });
      maths = await makeModule(app.dataSource, {
        code: 'MAT101',
        year: 2025,
        description: 'Discrete maths for CSC',
      });
      noDescription = await makeModule(app.dataSource, { code: 'PHY101', year: 2026, description: null });
    });

    it('matches query against code or description, case-insensitively', async () => {
      expect(await listIds('?query=csc')).toEqual(ids([software, security, maths]));
      expect(await listIds('?query=ENGINEER')).toEqual(ids([software]));
      expect(await listIds('?query=phy')).toEqual(ids([noDescription]));
      expect(await listIds('?query=nothing-like-this')).toEqual([]);
    });

    it('matches code against the code only', async () => {
      expect(await listIds('?code=csc')).toEqual(ids([software, security]));
      expect(await listIds('?code=101')).toEqual(ids([software, maths, noDescription]));
      expect(await listIds('?code=engineering')).toEqual([]);
    });

    it('matches year exactly, leading zeros allowed', async () => {
      expect(await listIds('?year=2025')).toEqual(ids([software, maths]));
      expect(await listIds('?year=02026')).toEqual(ids([security, noDescription]));
      expect(await listIds('?year=-2025')).toEqual([]);
      expect(await listIds('?year=1999')).toEqual([]);
    });

    it('combines filters with AND', async () => {
      expect(await listIds('?query=csc&year=2025')).toEqual(ids([software, maths]));
      expect(await listIds('?query=csc&code=101&year=2025')).toEqual(ids([software, maths]));
      expect(await listIds('?query=csc&code=mat&year=2026')).toEqual([]);
      const res = await list('?code=csc&year=2026');
      expect(res.body.data).toEqual({ modules: [moduleJson(security)], page: 1, per_page: 20, total: 1 });
    });

    it('treats empty filters as absent and ignores unknown parameters', async () => {
      expect(await listIds('?query=&code=&colour=blue')).toEqual(
        ids([software, security, maths, noDescription]),
      );
    });

    it('rejects a year that is not a 32-bit integer', async () => {
      for (const year of ['abc', '2025.0', '%2B2025', '1e3', '', '2147483648', '-2147483649', '4294967296']) {
        const res = await list(`?year=${year}`);
        expect([year, res.status, res.body]).toEqual([year, 400, failure('year must be an integer')]);
      }
      expect((await list('?year=2147483647')).status).toBe(200);
    });

    it('refuses a NUL character in a text filter', async () => {
      expect((await list('?query=a%00b')).body).toEqual(failure('query must not contain NUL characters'));
      expect((await list('?code=%00')).body).toEqual(failure('code must not contain NUL characters'));
    });
  });

  describe('literal text filters', () => {
    let percent: ModuleRow;
    let underscore: ModuleRow;
    let backslash: ModuleRow;

    beforeEach(async () => {
      percent = await makeModule(app.dataSource, { code: 'LIT001', description: 'Pass mark 40% of total' });
      await makeModule(app.dataSource, { code: 'LIT002', description: 'Pass mark 40 of total' });
      underscore = await makeModule(app.dataSource, { code: 'LIT003', description: 'snake_case naming' });
      await makeModule(app.dataSource, { code: 'LIT004', description: 'snakeXcase naming' });
      backslash = await makeModule(app.dataSource, { code: 'LIT005', description: 'C:\\Users\\path' });
      await makeModule(app.dataSource, { code: 'LIT006', description: 'C:Users path' });
    });

    it('matches % as itself', async () => {
      expect(await listIds('?query=%25')).toEqual(ids([percent]));
      expect(await listIds('?query=40%25%20of')).toEqual(ids([percent]));
    });

    it('matches _ as itself', async () => {
      expect(await listIds('?query=_')).toEqual(ids([underscore]));
      expect(await listIds('?query=snake_case')).toEqual(ids([underscore]));
      expect(await listIds('?code=_')).toEqual([]);
    });

    it('matches \\ as itself', async () => {
      expect(await listIds('?query=%5C')).toEqual(ids([backslash]));
      expect(await listIds('?query=%3A%5CUsers')).toEqual(ids([backslash]));
      expect(await listIds('?query=%5C%25')).toEqual([]);
    });
  });

  describe('sort', () => {
    let rows: ModuleRow[];

    beforeEach(async () => {
      rows = [
        await makeModule(app.dataSource, { code: 'BBB222', year: 2025, credits: 20, description: 'beta' }),
        await makeModule(app.dataSource, { code: 'AAA111', year: 2026, credits: 10, description: null }),
        await makeModule(app.dataSource, { code: 'CCC333', year: 2024, credits: 30, description: 'alpha' }),
        await makeModule(app.dataSource, { code: 'DDD444', year: 2025, credits: 20, description: 'gamma' }),
      ];
      // Distinct creation times in an order unlike the ids: 2, 0, 3, 1.
      for (const [index, minutes] of [
        [2, 1],
        [0, 2],
        [3, 3],
        [1, 4],
      ]) {
        await app.dataSource.query(
          `UPDATE modules SET created_at = timestamptz '2026-01-01T00:00:00Z' + make_interval(mins => $2) WHERE id = $1`,
          [rows[index].id, minutes],
        );
      }
    });

    const pick = (...indexes: number[]) => indexes.map((index) => Number(rows[index].id));

    it('orders by id ascending without sort', async () => {
      expect(await listIds('')).toEqual(pick(0, 1, 2, 3));
    });

    it('sorts by each allowed field, ascending and descending, ties by id', async () => {
      expect(await listIds('?sort=code')).toEqual(pick(1, 0, 2, 3));
      expect(await listIds('?sort=-code')).toEqual(pick(3, 2, 0, 1));
      expect(await listIds('?sort=year')).toEqual(pick(2, 0, 3, 1));
      expect(await listIds('?sort=-year')).toEqual(pick(1, 0, 3, 2));
      expect(await listIds('?sort=credits')).toEqual(pick(1, 0, 3, 2));
      expect(await listIds('?sort=-credits')).toEqual(pick(2, 0, 3, 1));
      expect(await listIds('?sort=created_at')).toEqual(pick(2, 0, 3, 1));
      expect(await listIds('?sort=-created_at')).toEqual(pick(1, 3, 0, 2));
    });

    it('puts null descriptions last in both directions', async () => {
      expect(await listIds('?sort=description')).toEqual(pick(2, 0, 3, 1));
      expect(await listIds('?sort=-description')).toEqual(pick(3, 0, 2, 1));
    });

    it('sorts by several fields in order', async () => {
      expect(await listIds('?sort=year,-code')).toEqual(pick(2, 3, 0, 1));
      expect(await listIds('?sort=-credits,code')).toEqual(pick(2, 0, 3, 1));
    });

    it('trims entries and skips blank ones', async () => {
      expect(await listIds('?sort=%20year%20,%20,,-code%20')).toEqual(pick(2, 3, 0, 1));
      expect(await listIds('?sort=')).toEqual(pick(0, 1, 2, 3));
      expect(await listIds('?sort=,%20,')).toEqual(pick(0, 1, 2, 3));
    });

    it('rejects any other entry', async () => {
      for (const sort of [
        'id',
        'name',
        '--code',
        'code%20desc',
        '%2Bcode',
        'Code',
        'code,bogus',
        '-',
        'm.code',
      ]) {
        const res = await list(`?sort=${sort}`);
        expect([sort, res.status, res.body]).toEqual([sort, 400, failure(INVALID_SORT)]);
      }
      expect((await list('?sort=code&sort=year')).body).toEqual(failure(INVALID_SORT));
    });

    it('reports a bad sort only once the other parameters are valid, and alone', async () => {
      expect((await list('?sort=bogus&page=x')).body).toEqual(failure('page must be an integer'));
      expect((await list('?sort=bogus&year=x')).body).toEqual(failure('year must be an integer'));
      expect((await list('?sort=bogus&page=1&year=2025&query=a')).body).toEqual(failure(INVALID_SORT));
    });
  });
}
