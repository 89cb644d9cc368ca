// Reading modules: the list and search, one module, the JSON PostgreSQL builds, and the answers when the database fails.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import pg from 'pg';
import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import {
  type RunDatabase,
  scratchDatabase,
  startTestApp,
  type TestApp,
  testDatabaseUrl,
  useTestApp,
} from './support/app.js';
import {
  assignRole,
  makeModule,
  makeUser,
  type ModuleRow,
  tokenFor,
  type UserRow,
} from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';
import { client, type Client } from './support/http.js';
import {
  failure,
  ids,
  INVALID_SORT,
  moduleJson,
  PERMISSION_DENIED,
  userJson,
} from './support/modules-fixtures.js';

describe('GET /api/modules', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let adminToken: string;
  beforeEach(async () => {
    ({ admin, token: adminToken } = await freshAdmin(app));
  });

  const list = (query = '', token = adminToken) => api.get(`/api/modules${query}`, { token });
  const listIds = async (query: string, token = adminToken) => {
    const res = await list(query, token);
    expect(res.status).toBe(200);
    return ids(res.body.data.modules);
  };

  it('requires a token', async () => {
    const res = await api.get('/api/modules');
    expect(res.status).toBe(401);
    expect(res.body).toEqual(failure('Authentication required'));
    expect((await api.get('/api/modules', { token: 'garbage' })).body).toEqual(
      failure('Invalid or expired token'),
    );
  });

  it('gives an admin every module in id order with page, per_page and total', async () => {
    const rows = [
      await makeModule(app.dataSource, { code: 'ZZZ999', year: 2024 }),
      await makeModule(app.dataSource, { code: 'AAA111', year: 2026, description: null }),
      await makeModule(app.dataSource, { code: 'MMM555', year: 2025, credits: 30 }),
    ];
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { modules: rows.map(moduleJson), page: 1, per_page: 20, total: 3 },
      message: 'Modules retrieved successfully',
    });
  });

  it('answers an empty list when there are no modules', async () => {
    expect((await list()).body.data).toEqual({ modules: [], page: 1, per_page: 20, total: 0 });
  });

  describe('visibility', () => {
    let user: UserRow;
    let token: string;
    let mine: ModuleRow[];

    beforeEach(async () => {
      user = await makeUser(app.dataSource);
      token = tokenFor(user);
      const other = await makeUser(app.dataSource);
      mine = [];
      for (const role of [
        ModuleRole.Lecturer,
        ModuleRole.AssistantLecturer,
        ModuleRole.Tutor,
        ModuleRole.Student,
      ]) {
        const module = await makeModule(app.dataSource);
        await assignRole(app.dataSource, user.id, module.id, role);
        mine.push(module);
        // Another user's role in a module of this user's does not duplicate it.
        await assignRole(app.dataSource, other.id, module.id, ModuleRole.Student);
      }
      const notMine = await makeModule(app.dataSource);
      await assignRole(app.dataSource, other.id, notMine.id, ModuleRole.Lecturer);
      await makeModule(app.dataSource);
    });

    it('shows a non-admin exactly the modules where they hold any role', async () => {
      const res = await list('', token);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ modules: mine.map(moduleJson), page: 1, per_page: 20, total: 4 });
    });

    it('counts only visible modules in total across pages', async () => {
      const res = await list('?per_page=3&page=2', token);
      expect(res.body.data).toEqual({ modules: [moduleJson(mine[3])], page: 2, per_page: 3, total: 4 });
    });

    it('applies filters within the visible modules only', async () => {
      const res = await list(`?code=${mine[1].code.toLowerCase()}`, token);
      expect(ids(res.body.data.modules)).toEqual([Number(mine[1].id)]);
      expect(res.body.data.total).toBe(1);
    });

    it('shows an admin every module whether or not they hold roles', async () => {
      await assignRole(app.dataSource, admin.id, mine[0].id, ModuleRole.Student);
      expect((await list()).body.data.total).toBe(6);
    });

    it('treats a token claiming admin for a user without the admin flag as a non-admin', async () => {
      const res = await list('', tokenFor({ id: user.id, admin: true }));
      expect(res.body.data).toEqual({ modules: mine.map(moduleJson), page: 1, per_page: 20, total: 4 });
    });

    it('answers a non-admin without any role an empty page with the paging in effect', async () => {
      const loner = await makeUser(app.dataSource);
      const res = await list('?page=3&per_page=7', tokenFor(loner));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: { modules: [], page: 3, per_page: 7, total: 0 },
        message: 'Modules retrieved successfully',
      });
    });
  });

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
});

describe('module reads', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let adminToken: string;
  beforeEach(async () => {
    ({ admin, token: adminToken } = await freshAdmin(app));
  });

  describe('GET /api/modules/{module_id}', () => {
    let module: ModuleRow;

    beforeEach(async () => {
      module = await makeModule(app.dataSource, { code: 'SEC301', year: 2026, description: 'Security' });
    });

    const read = (id: number | string, token = adminToken) => api.get(`/api/modules/${id}`, { token });

    it('requires a token', async () => {
      expect((await api.get(`/api/modules/${module.id}`)).body).toEqual(failure('Authentication required'));
      expect((await api.get('/api/modules/abc')).status).toBe(401);
    });

    it('gives an admin the module with four empty personnel lists', async () => {
      const res = await read(module.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: { ...moduleJson(module), lecturers: [], assistant_lecturers: [], tutors: [], students: [] },
        message: 'Module retrieved successfully',
      });
    });

    it('lists each role holder under their role, each list ordered by username', async () => {
      const make = (username: string) => makeUser(app.dataSource, { username });
      const carol = await make('carol');
      const alice = await make('alice');
      const bob = await make('Bob');
      const dave = await make('dave');
      const erin = await make('Erin');
      const frank = await make('frank');
      const grace = await make('grace');
      await makeUser(app.dataSource, { username: 'outsider' });
      for (const [user, role] of [
        [carol, ModuleRole.Tutor],
        [alice, ModuleRole.Tutor],
        [bob, ModuleRole.Tutor],
        [dave, ModuleRole.Lecturer],
        [erin, ModuleRole.AssistantLecturer],
        [frank, ModuleRole.Student],
        [grace, ModuleRole.Student],
      ] as const) {
        await assignRole(app.dataSource, user.id, module.id, role);
      }
      const other = await makeModule(app.dataSource);
      await assignRole(app.dataSource, bob.id, other.id, ModuleRole.Lecturer);

      const res = await read(module.id);
      expect(res.body.data).toEqual({
        ...moduleJson(module),
        lecturers: [userJson(dave)],
        assistant_lecturers: [userJson(erin)],
        tutors: [alice, bob, carol].map(userJson),
        students: [frank, grace].map(userJson),
      });
      expect(JSON.stringify(res.body)).not.toMatch(/password|hash/i);
    });

    it('shows a role holder with an avatar with its URL', async () => {
      const user = await makeUser(app.dataSource);
      await app.dataSource.query(
        `UPDATE users SET avatar_key = 'avatars/x', avatar_content_type = 'image/png' WHERE id = $1`,
        [user.id],
      );
      await assignRole(app.dataSource, user.id, module.id, ModuleRole.Student);
      const res = await read(module.id);
      expect(res.body.data.students).toEqual([
        { ...userJson(user), avatar_url: `/api/users/${user.id}/avatar` },
      ]);
    });

    // The personnel lists are JSON text built by PostgreSQL: the bytes must be what JSON.stringify writes.
    it('writes the body byte for byte as JSON.stringify would, whatever the characters', async () => {
      const odd = [
        'quote"back\\slash@example.edu',
        'tab\tline\nfeed\u0001ctl@example.edu',
        'accent-\u00e9-\u2028-\u{1f600}@example.edu',
      ];
      const people: UserRow[] = [];
      for (const [i, email] of odd.entries()) {
        const user = await makeUser(app.dataSource, { username: `Odd${i}`, email });
        await assignRole(
          app.dataSource,
          user.id,
          module.id,
          i === 0 ? ModuleRole.Lecturer : ModuleRole.Student,
        );
        people.push(user);
      }
      await app.dataSource.query(`UPDATE users SET avatar_key = '' WHERE id = $1`, [people[1].id]);
      await app.dataSource.query(`UPDATE users SET avatar_key = 'avatars/x' WHERE id = $1`, [people[2].id]);
      const response = await fetch(`${app.url}/api/modules/${module.id}`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await response.text()).toBe(
        JSON.stringify({
          success: true,
          data: {
            ...moduleJson(module),
            lecturers: [userJson(people[0])],
            assistant_lecturers: [],
            tutors: [],
            students: [
              userJson(people[1]),
              { ...userJson(people[2]), avatar_url: `/api/users/${people[2].id}/avatar` },
            ],
          },
          message: 'Module retrieved successfully',
        }),
      );
    });

    it.each(Object.values(ModuleRole))('lets a %s of the module read it', async (role) => {
      const user = await makeUser(app.dataSource);
      await assignRole(app.dataSource, user.id, module.id, role);
      const res = await read(module.id, tokenFor(user));
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Module retrieved successfully');
      expect(res.body.data.id).toBe(Number(module.id));
    });

    it('writes a large body (sent as one buffer) byte for byte as JSON.stringify would, multi-byte text included', async () => {
      // Over 16 KiB of JSON text (LARGE_JSON_TEXT): the envelope is written into a Buffer from its parts.
      const students: UserRow[] = [];
      for (let i = 0; i < 120; i += 1) {
        const username = `Gro\u00df-\u{1f600}-${String(i).padStart(3, '0')}-${module.id}`;
        const user = await makeUser(app.dataSource, {
          username,
          email: `gross${i}-${module.id}@example.edu`,
        });
        await assignRole(app.dataSource, user.id, module.id, ModuleRole.Student);
        students.push(user);
      }
      const response = await fetch(`${app.url}/api/modules/${module.id}`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      const body = await response.text();
      const expected = JSON.stringify({
        success: true,
        data: {
          ...moduleJson(module),
          lecturers: [],
          assistant_lecturers: [],
          tutors: [],
          students: students.map(userJson),
        },
        message: 'Module retrieved successfully',
      });
      expect(expected.length).toBeGreaterThan(16_384);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(expected));
      expect(body).toBe(expected);
    });

    it('refuses a user without a role in the module', async () => {
      const user = await makeUser(app.dataSource);
      const other = await makeModule(app.dataSource);
      await assignRole(app.dataSource, user.id, other.id, ModuleRole.Lecturer);
      const res = await read(module.id, tokenFor(user));
      expect(res.status).toBe(403);
      expect(res.body).toEqual(failure(PERMISSION_DENIED));
    });

    it('refuses a token claiming admin for a user without the admin flag', async () => {
      const user = await makeUser(app.dataSource);
      expect((await read(module.id, tokenFor({ id: user.id, admin: true }))).status).toBe(403);
    });

    it('answers 404 for an unknown module to every caller, before access', async () => {
      const user = await makeUser(app.dataSource);
      for (const token of [adminToken, tokenFor(user)]) {
        const res = await read(Number(module.id) + 1000, token);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(failure('Module not found'));
      }
      expect((await read('9223372036854775807')).body).toEqual(failure('Module not found'));
    });

    it('rejects a module_id that is not a positive 64-bit integer', async () => {
      const user = await makeUser(app.dataSource);
      for (const id of [
        'abc',
        '0',
        '-1',
        '1.5',
        '1e3',
        '%2B1',
        '9223372036854775808',
        '99999999999999999999',
      ]) {
        const res = await read(id, tokenFor(user));
        expect([id, res.status, res.body]).toEqual([
          id,
          400,
          failure('module_id must be a positive integer'),
        ]);
      }
    });
  });

  describe('GET /api/modules/me', () => {
    const mine = (token: string) => api.get('/api/modules/me', { token });

    it('requires a token', async () => {
      expect((await api.get('/api/modules/me')).body).toEqual(failure('Authentication required'));
    });

    it('answers four empty groups for a user without roles', async () => {
      const user = await makeUser(app.dataSource);
      await makeModule(app.dataSource);
      const res = await mine(tokenFor(user));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: { as_student: [], as_tutor: [], as_lecturer: [], as_assistant_lecturer: [] },
        message: 'My module details retrieved successfully',
      });
    });

    it('groups the modules by role, each ordered by year descending then code', async () => {
      const user = await makeUser(app.dataSource);
      const other = await makeUser(app.dataSource);
      const m = async (code: string, year: number, role: ModuleRole) => {
        const row = await makeModule(app.dataSource, { code, year });
        await assignRole(app.dataSource, user.id, row.id, role);
        await assignRole(app.dataSource, other.id, row.id, ModuleRole.Student);
        return row;
      };
      const s1 = await m('ZZZ100', 2024, ModuleRole.Student);
      const s2 = await m('BBB100', 2026, ModuleRole.Student);
      const s3 = await m('AAA100', 2024, ModuleRole.Student);
      const s4 = await m('CCC100', 2026, ModuleRole.Student);
      const t1 = await m('TTT100', 2025, ModuleRole.Tutor);
      const l1 = await m('LLL100', 2023, ModuleRole.Lecturer);
      const l2 = await m('LLL200', 2027, ModuleRole.Lecturer);
      const a1 = await m('ASS100', 2025, ModuleRole.AssistantLecturer);
      await makeModule(app.dataSource, { code: 'NOT100', year: 2030 });

      const res = await mine(tokenFor(user));
      expect(res.body.data).toEqual({
        as_student: [s2, s4, s3, s1].map(moduleJson),
        as_tutor: [moduleJson(t1)],
        as_lecturer: [l2, l1].map(moduleJson),
        as_assistant_lecturer: [moduleJson(a1)],
      });
    });

    it('shows an admin only the modules where they hold a role', async () => {
      await makeModule(app.dataSource);
      expect((await mine(adminToken)).body.data).toEqual({
        as_student: [],
        as_tutor: [],
        as_lecturer: [],
        as_assistant_lecturer: [],
      });
      const module = await makeModule(app.dataSource);
      await assignRole(app.dataSource, admin.id, module.id, ModuleRole.Tutor);
      expect((await mine(adminToken)).body.data.as_tutor).toEqual([moduleJson(module)]);
    });
  });
});

/**
 * The module list and `GET /api/modules/me` write Modules as JSON text built by PostgreSQL: the bytes must be
 * exactly what `JSON.stringify` writes for the same values, whatever the characters.
 */
describe('module JSON built by PostgreSQL', () => {
  const { app } = useTestApp();

  const odd = [
    'quote"back\\slash',
    'tab\tline\nfeed\r\u0001\u001f\u007f ctl',
    'accent-\u00e9-\u2028-\u2029-\u{1f600} </script>',
    null,
  ];

  async function text(path: string, token: string): Promise<string> {
    const response = await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    return response.text();
  }

  it('lists and groups modules byte for byte as JSON.stringify would', async () => {
    const { token: adminToken } = await freshAdmin(app);
    await app.dataSource.query('DELETE FROM modules');
    const member = await makeUser(app.dataSource);
    const roles = [ModuleRole.Student, ModuleRole.Lecturer, ModuleRole.Student, ModuleRole.Tutor];
    const modules: ModuleRow[] = [];
    for (const [i, description] of odd.entries()) {
      const module = await makeModule(app.dataSource, { code: `JSN10${i}`, year: 2020 + i, description });
      await assignRole(app.dataSource, member.id, module.id, roles[i]);
      modules.push(module);
    }
    const other = await makeModule(app.dataSource, { code: 'JSN200', year: 2030, description: 'not mine' });

    const byCode = (list: ModuleRow[]) => [...list].sort((a, b) => a.code.localeCompare(b.code));
    const listBody = (list: ModuleRow[]) =>
      JSON.stringify({
        success: true,
        data: { modules: byCode(list).map(moduleJson), page: 1, per_page: 20, total: list.length },
        message: 'Modules retrieved successfully',
      });
    expect(await text('/api/modules', adminToken)).toBe(listBody([...modules, other]));
    expect(await text('/api/modules?query=JSN', adminToken)).toBe(listBody([...modules, other]));
    expect(await text('/api/modules', tokenFor(member))).toBe(listBody(modules));

    // Each group: year descending, then code.
    const group = (role: ModuleRole) =>
      modules
        .filter((_, i) => roles[i] === role)
        .sort((a, b) => b.year - a.year)
        .map(moduleJson);
    expect(await text('/api/modules/me', tokenFor(member))).toBe(
      JSON.stringify({
        success: true,
        data: {
          as_student: group(ModuleRole.Student),
          as_tutor: group(ModuleRole.Tutor),
          as_lecturer: group(ModuleRole.Lecturer),
          as_assistant_lecturer: group(ModuleRole.AssistantLecturer),
        },
        message: 'My module details retrieved successfully',
      }),
    );
  });

  it('writes an empty page past the end and an empty /me as JSON.stringify would', async () => {
    const { token: adminToken } = await freshAdmin(app);
    const loner = await makeUser(app.dataSource);
    const [{ n }] = await app.dataSource.query<{ n: string }[]>('SELECT count(*) AS n FROM modules');
    expect(await text('/api/modules?page=9999', adminToken)).toBe(
      JSON.stringify({
        success: true,
        data: { modules: [], page: 9999, per_page: 20, total: Number(n) },
        message: 'Modules retrieved successfully',
      }),
    );
    expect(await text('/api/modules/me', tokenFor(loner))).toBe(
      JSON.stringify({
        success: true,
        data: { as_student: [], as_tutor: [], as_lecturer: [], as_assistant_lecturer: [] },
        message: 'My module details retrieved successfully',
      }),
    );
  });
});

/**
 * Database failures answer each route's 500 message from the seed, and the service recovers without a
 * restart. The service runs on a database of its own, so blocking it affects nothing else.
 */
describe('modules when the database fails', () => {
  let database: RunDatabase;
  let admin: pg.Client;
  let name: string;
  let app: TestApp;
  let api: Client;
  let token: string;
  let moduleId: number;

  beforeAll(async () => {
    database = await scratchDatabase('mas_modules');
    name = database.name;
    admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    app = await startTestApp({ databaseUrl: database.url });
    api = client(app.url);
    const user = await makeUser(app.dataSource);
    const module = await makeModule(app.dataSource);
    await assignRole(app.dataSource, user.id, module.id, ModuleRole.Tutor);
    token = tokenFor(user);
    moduleId = Number(module.id);
  });
  afterAll(async () => {
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    await app.close();
    await admin.end();
  });

  const reads = () =>
    Promise.all([
      api.get('/api/modules', { token }),
      api.get('/api/modules/me', { token }),
      api.get(`/api/modules/${moduleId}`, { token }),
    ]);

  it('answers the seed messages while connections are refused, then recovers', async () => {
    // Served successfully first, which also puts the caller in the 5-second access cache.
    expect((await reads()).map((res) => res.status)).toEqual([200, 200, 200]);

    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name]);
    try {
      const [list, mine, read] = await reads();
      expect([list.status, list.body]).toEqual([500, failure('An internal server error occurred')]);
      expect([mine.status, mine.body]).toEqual([
        500,
        failure('An error occurred while retrieving module details'),
      ]);
      expect([read.status, read.body]).toEqual([500, failure('Database error retrieving module')]);
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    }

    const [list, mine, read] = await reads();
    expect([list.status, list.body.data.total]).toEqual([200, 1]);
    expect([mine.status, mine.body.data.as_tutor.length]).toEqual([200, 1]);
    expect([read.status, read.body.data.tutors.length]).toEqual([200, 1]);
  });

  it('answers Failed to retrieve assigned personnel when only the personnel query fails', async () => {
    expect((await api.get(`/api/modules/${moduleId}`, { token })).status).toBe(200);
    // The module read needs only modules and user_module_roles; the personnel query also needs users.
    const db = new pg.Client({ connectionString: app.config.databaseUrl });
    await db.connect();
    await db.query(`ALTER TABLE users RENAME TO users_hidden`);
    try {
      const res = await api.get(`/api/modules/${moduleId}`, { token });
      expect([res.status, res.body]).toEqual([500, failure('Failed to retrieve assigned personnel')]);
    } finally {
      await db.query(`ALTER TABLE users_hidden RENAME TO users`);
      await db.end();
    }
    const res = await api.get(`/api/modules/${moduleId}`, { token });
    expect([res.status, res.body.message]).toEqual([200, 'Module retrieved successfully']);
  });

  it('never shows SQL or driver text in a 500', async () => {
    await api.get('/api/modules', { token });
    const db = new pg.Client({ connectionString: app.config.databaseUrl });
    await db.connect();
    await db.query(`ALTER TABLE modules RENAME TO modules_hidden`);
    try {
      for (const path of ['/api/modules?query=x', '/api/modules/me', `/api/modules/${moduleId}`]) {
        const res = await api.get(path, { token });
        expect(res.status).toBe(500);
        expect(Object.keys(res.body).sort()).toEqual(['data', 'message', 'success']);
        expect(JSON.stringify(res.body)).not.toMatch(/modules_hidden|relation|SELECT|does not exist/i);
      }
    } finally {
      await db.query(`ALTER TABLE modules_hidden RENAME TO modules`);
      await db.end();
    }
  });
});
