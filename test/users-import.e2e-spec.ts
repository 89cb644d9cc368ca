import { useTestApp } from './support/app.js';
import { makeUser, tokenFor, type UserRow } from './support/factories.js';

const csv = (text: string) => ({ 'content-type': 'text/csv' });
const CLASH = 'A user with this username or email already exists';

describe('Users import (POST /api/users/import)', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let token: string;

  beforeEach(async () => {
    await app.reset();
    admin = await makeUser(app.dataSource, { admin: true, username: 'root', email: 'root@example.edu' });
    token = tokenFor(admin);
  });

  const send = (body: string, query = '', headers: Record<string, string> = { 'content-type': 'text/csv' }) =>
    api.post(`/api/users/import${query}`, { token, body, headers });
  const userCount = async () => Number((await app.dataSource.query(`SELECT count(*) AS n FROM users`))[0].n);
  const auditCount = async (action: string) =>
    Number((await app.dataSource.query(`SELECT count(*) AS n FROM audit_events WHERE action = $1`, [action]))[0].n);

  it('creates the users of a file and answers 201 with one row per line', async () => {
    const res = await send('username,email,admin,password\r\nann,Ann@Example.edu,yes,long-enough-1\r\nbob,bob@example.edu,,\r\n');
    expect(res.status).toBe(201);
    expect(res.body.message).toBe('Users imported');
    expect(res.body.data).toMatchObject({ created: 2, unchanged: 0, errors: 0, dry_run: false });
    expect(res.body.data.rows[0]).toEqual({ line: 2, action: 'create', username: 'ann', id: expect.any(Number) });
    expect(res.body.data.rows[1]).toEqual({
      line: 3,
      action: 'create',
      username: 'bob',
      id: expect.any(Number),
      password: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
    });
    const login = await api.post('/api/auth/login', {
      body: { username: 'bob', password: res.body.data.rows[1].password },
    });
    expect(login.status).toBe(200);
    expect(await auditCount('user.import')).toBe(1);
    void csv;
  });
});
