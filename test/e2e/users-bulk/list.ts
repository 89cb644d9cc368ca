// Part of test/users-bulk.e2e-spec.ts: the user list, its filters, sort and paging.
import { type UsedTestApp } from '../../support/app.js';
import { makeUser, tokenFor, type UserRow } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { failure } from '../../support/http.js';
import { accountJson } from '../../support/users-helpers.js';

export function usersList({ app, api }: UsedTestApp): void {
  let admin: UserRow;
  let token: string;

  beforeEach(async () => {
    ({ admin, token } = await freshAdmin(app, { username: 'root', email: 'root@example.edu' }));
  });

  const list = (query = '') => api.get(`/api/users${query}`, { token });
  const usernames = (body: any) => body.data.users.map((user: any) => user.username);

  /** Users with the given names (emails derived from them), created in that order. */
  async function users(...names: string[]): Promise<UserRow[]> {
    const rows: UserRow[] = [];
    for (const name of names) rows.push(await makeUser(app.dataSource, { username: name }));
    return rows;
  }

  it('returns 401 without a token and 403 for a non-admin', async () => {
    const member = await makeUser(app.dataSource);
    expect((await api.get('/api/users')).body).toEqual(failure('Authentication required'));
    const denied = await api.get('/api/users', { token: tokenFor(member) });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual(failure('You do not have permission to perform this action'));
  });

  it('lists users as User summaries in id order with the paging in effect', async () => {
    const [bob] = await users('bob');
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      message: 'Users retrieved successfully',
      data: {
        page: 1,
        per_page: 20,
        total: 2,
        users: [accountJson(admin), accountJson(bob)],
      },
    });
    expect(JSON.stringify(res.body)).not.toMatch(/password|argon2/);
  });

  it('orders by id by default, whatever the insertion of names', async () => {
    await users('zed', 'amy', 'Mia');
    expect(usernames((await list()).body)).toEqual(['root', 'zed', 'amy', 'Mia']);
  });

  it('pages with total counting every match', async () => {
    await users('u1', 'u2', 'u3', 'u4');
    const res = await list('?page=2&per_page=2');
    expect(res.body.data).toMatchObject({ page: 2, per_page: 2, total: 5 });
    expect(usernames(res.body)).toEqual(['u2', 'u3']);
    const beyond = await list('?page=9&per_page=2');
    expect(beyond.body.data).toMatchObject({ users: [], page: 9, per_page: 2, total: 5 });
  });

  it.each([
    ['?page=0', 1, 20],
    ['?page=-4', 1, 20],
    ['?per_page=0', 1, 1],
    ['?per_page=-1', 1, 1],
    ['?per_page=1000', 1, 100],
    ['?page=002&per_page=005', 2, 5],
    ['?page=2147483647', 2147483647, 20],
  ])('clamps %s to page %i, per_page %i', async (query, page, perPage) => {
    const res = await list(query);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ page, per_page: perPage, total: 1 });
  });

  it.each([
    ['?page=abc', 'page must be an integer'],
    ['?page=1.0', 'page must be an integer'],
    ['?page=%2B5', 'page must be an integer'],
    ['?page=1e3', 'page must be an integer'],
    ['?page=', 'page must be an integer'],
    ['?per_page=4294967296', 'per_page must be an integer'],
    ['?page=x&per_page=y', 'page must be an integer; per_page must be an integer'],
    ['?admin=yes', 'admin must be true or false'],
    ['?admin=TRUE', 'admin must be true or false'],
  ])('answers 400 for %s', async (query, message) => {
    const res = await list(query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, data: null, message });
  });

  it('filters by query over username or email, case-insensitively', async () => {
    await users('Alice', 'bob');
    await makeUser(app.dataSource, { username: 'carol', email: 'carol@alicecorp.org' });
    expect(usernames((await list('?query=ALIC')).body)).toEqual(['Alice', 'carol']);
    expect((await list('?query=ALIC')).body.data.total).toBe(2);
  });

  it('matches %, _ and \\ in text filters literally', async () => {
    await users('under_score', 'underXscore');
    expect(usernames((await list('?query=r_s')).body)).toEqual(['under_score']);
    expect(usernames((await list('?username=r_s')).body)).toEqual(['under_score']);
    expect((await list('?query=%25')).body.data.total).toBe(0);
    expect((await list('?query=%5C')).body.data.total).toBe(0);
  });

  it('filters by username only and by email only', async () => {
    await makeUser(app.dataSource, { username: 'dave', email: 'dave@mail.org' });
    await makeUser(app.dataSource, { username: 'mail-man', email: 'mm@example.edu' });
    expect(usernames((await list('?username=MAIL')).body)).toEqual(['mail-man']);
    expect(usernames((await list('?email=MAIL')).body)).toEqual(['dave']);
  });

  it('filters by admin flag and combines filters with AND', async () => {
    await makeUser(app.dataSource, { username: 'admin2', admin: true });
    await users('admirer');
    expect(usernames((await list('?admin=true')).body)).toEqual(['root', 'admin2']);
    expect(usernames((await list('?admin=false')).body)).toEqual(['admirer']);
    expect(usernames((await list('?admin=true&username=adm')).body)).toEqual(['admin2']);
    expect((await list('?admin=false&username=root')).body.data.total).toBe(0);
  });

  it('ignores unknown query parameters', async () => {
    const res = await list('?colour=blue&per_page=5');
    expect(res.status).toBe(200);
    expect(res.body.data.per_page).toBe(5);
  });

  it('sorts by username case-insensitively, either way', async () => {
    await users('bob', 'Alice', 'carl');
    expect(usernames((await list('?sort=username')).body)).toEqual(['Alice', 'bob', 'carl', 'root']);
    expect(usernames((await list('?sort=-username')).body)).toEqual(['root', 'carl', 'bob', 'Alice']);
  });

  it('sorts by email, created_at and admin, with id as the tie-breaker', async () => {
    await makeUser(app.dataSource, { username: 'x1', email: 'b@example.edu' });
    await makeUser(app.dataSource, { username: 'x2', email: 'a@example.edu', admin: true });
    await makeUser(app.dataSource, { username: 'x3', email: 'c@example.edu' });
    // x2 and x3 share a creation time: the id decides between them in both directions.
    await app.dataSource.query(
      `UPDATE users SET created_at = CASE username WHEN 'root' THEN timestamptz '2020-01-01Z'
         WHEN 'x1' THEN timestamptz '2021-01-01Z' ELSE timestamptz '2022-01-01Z' END`,
    );
    expect(usernames((await list('?sort=email')).body)).toEqual(['x2', 'x1', 'x3', 'root']);
    expect(usernames((await list('?sort=-created_at')).body)).toEqual(['x2', 'x3', 'x1', 'root']);
    expect(usernames((await list('?sort=created_at')).body)).toEqual(['root', 'x1', 'x2', 'x3']);
    expect(usernames((await list('?sort=admin')).body)).toEqual(['x1', 'x3', 'root', 'x2']);
    expect(usernames((await list('?sort=-admin, -email')).body)).toEqual(['root', 'x2', 'x3', 'x1']);
    expect(usernames((await list('?sort=,admin,,')).body)).toEqual(['x1', 'x3', 'root', 'x2']);
  });

  it('pages stably through equal sort keys', async () => {
    await users('p1', 'p2', 'p3', 'p4', 'p5', 'p6');
    const seen: string[] = [];
    for (let page = 1; page <= 4; page++)
      seen.push(...usernames((await list(`?sort=admin&per_page=2&page=${page}`)).body));
    expect(seen).toEqual(['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'root']);
  });

  it.each(['password', '--username', 'username desc', 'id', 'avatar_url', '-'])(
    'answers 400 for sort=%s',
    async (sort) => {
      const res = await list(`?sort=${encodeURIComponent(sort)}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failure('Invalid field used for sorting'));
    },
  );

  it('reports an invalid sort only once the other parameters are valid', async () => {
    const res = await list('?sort=bogus&per_page=x');
    expect(res.body.message).toBe('per_page must be an integer');
  });

  it('answers 400 for a repeated text filter', async () => {
    const res = await list('?query=a&query=b');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('query must be given at most once');
  });
}
