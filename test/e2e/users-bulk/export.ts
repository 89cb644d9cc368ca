// Part of test/users-bulk.e2e-spec.ts: exporting users as CSV.
import { type UsedTestApp } from '../../support/app.js';
import { csvLines } from '../../support/csv.js';
import { makeUser, tokenFor } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { failure } from '../../support/modules-fixtures.js';

export function usersExport({ app, api }: UsedTestApp): void {
  let token: string;

  beforeEach(async () => {
    ({ token } = await freshAdmin(app, { username: 'root' }));
  });

  const download = (query = '') =>
    fetch(`${app.url}/api/users/export.csv${query}`, { headers: { authorization: `Bearer ${token}` } });

  it('answers every user matching the filters, in the sort asked for, as CSV', async () => {
    const ann = await makeUser(app.dataSource, { username: 'ann', email: 'ann@example.edu' });
    await makeUser(app.dataSource, { username: '+bob', email: '@bob@example.edu' });
    await makeUser(app.dataSource, { username: 'cid', email: 'cid@example.edu', admin: true });
    const res = await download('?admin=false&sort=-username');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="users.csv"');
    const lines = csvLines(await res.text());
    expect(lines[0]).toBe(
      'id,username,email,admin,created_at,updated_at,given_name,family_name,display_name,external_id,active',
    );
    expect(lines[1]).toBe(
      `${ann.id},ann,ann@example.edu,false,${ann.created_at.toISOString()},${ann.updated_at.toISOString()},,,,,true`,
    );
    expect(lines[2]).toMatch(/^\d+,'\+bob,'@bob@example.edu,false,/);
    expect(lines).toHaveLength(3);
    const filtered = csvLines(await (await download('?query=CI')).text());
    expect(filtered.slice(1).map((line) => line.split(',')[1])).toEqual(['cid']);
  });

  it('guards cells for spreadsheets: ; always quoted, full-width formula starts prefixed', async () => {
    const dee = await makeUser(app.dataSource, { username: 'dee', email: 'dee@example.edu' });
    await app.dataSource.query(
      `UPDATE users SET display_name = 'x;=1+1', given_name = '＝1+1', family_name = '＠SUM(A1)' WHERE id = $1`,
      [dee.id],
    );
    const lines = csvLines(await (await download('?query=dee')).text());
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`,'＝1+1,'＠SUM(A1),"x;=1+1",,true`);
  });

  it('answers errors before the first byte as JSON envelopes', async () => {
    expect(await api.get('/api/users/export.csv?sort=password', { token })).toMatchObject({
      status: 400,
      body: failure('Invalid field used for sorting'),
    });
    expect(await api.get('/api/users/export.csv?admin=maybe', { token })).toMatchObject({
      status: 400,
      body: failure('admin must be true or false'),
    });
    const user = await makeUser(app.dataSource);
    expect(await api.get('/api/users/export.csv', { token: tokenFor(user) })).toMatchObject({ status: 403 });
    expect(await api.get('/api/users/export.csv')).toMatchObject({ status: 401 });
  });
}
