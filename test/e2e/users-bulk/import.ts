// Part of test/users-bulk.e2e-spec.ts: importing users from CSV.
import { type UsedTestApp } from '../../support/app.js';
import { auditEvents, postCsv, postCsvForm } from '../../support/csv.js';
import { makeUser, tokenFor, type UserRow } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { failure } from '../../support/modules-fixtures.js';

const CLASH = 'A user with this username or email already exists';
const USERNAME_MESSAGE = "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'";

export function usersImport({ app, api }: UsedTestApp): void {
  let admin: UserRow;
  let token: string;

  beforeEach(async () => {
    ({ admin, token } = await freshAdmin(app, { username: 'root' }));
  });

  const send = (text: string | Buffer, query = '') => postCsv(api, `/api/users/import${query}`, token, text);
  const userCount = async () => Number((await app.dataSource.query(`SELECT count(*) AS n FROM users`))[0].n);

  it('creates the users of a file in one event and answers 201 with one row per line', async () => {
    const res = await send(
      'username,email,admin,password\r\nann,Ann@Example.edu,yes,long-enough-1\r\nbob,bob@example.edu,,\r\n',
    );
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      message: 'Users imported',
      data: {
        rows: [
          { line: 2, action: 'create', username: 'ann', id: expect.any(Number) },
          {
            line: 3,
            action: 'create',
            username: 'bob',
            id: expect.any(Number),
            password: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
          },
        ],
        created: 2,
        updated: 0,
        unchanged: 0,
        errors: 0,
        dry_run: false,
      },
    });
    const [ann] = await app.dataSource.query(
      `SELECT email, admin, password_hash FROM users WHERE username = 'ann'`,
    );
    expect(ann).toMatchObject({ email: 'ann@example.edu', admin: true });
    expect(ann.password_hash).toMatch(/^\$argon2id\$/);
    const generated = res.body.data.rows[1].password;
    const [bob] = await app.dataSource.query(`SELECT password_hash FROM users WHERE username = 'bob'`);
    expect(bob.password_hash).not.toContain(generated);
    expect(
      (await api.post('/api/auth/login', { body: { username: 'bob', password: generated } })).status,
    ).toBe(200);
    expect(
      (await api.post('/api/auth/login', { body: { username: 'ann', password: 'long-enough-1' } })).status,
    ).toBe(200);

    const events = await auditEvents(app.dataSource, 'user.import');
    expect(events).toEqual([
      {
        actor_id: Number(admin.id),
        action: 'user.import',
        target_type: 'user',
        target_ids: res.body.data.rows.map((row: { id: number }) => String(row.id)),
        summary: { users: [{ username: 'ann', admin: true }, { username: 'bob' }] },
        request_id: expect.any(String),
        client_ip: '127.0.0.1',
      },
    ]);
    expect(JSON.stringify(events)).not.toContain(generated);
    expect(JSON.stringify(events)).not.toContain('long-enough-1');
  });

  it('changes nothing the second time: every row unchanged, no event', async () => {
    const file = 'username,email\nann,ann@example.edu\nROOT,Root@Example.edu\n';
    expect((await send(file)).status).toBe(201);
    const before = await userCount();
    const again = await send(file);
    expect(again.status).toBe(201);
    expect(again.body.data).toEqual({
      rows: [
        { line: 2, action: 'unchanged', username: 'ann', id: expect.any(Number) },
        { line: 3, action: 'unchanged', username: 'ROOT', id: Number(admin.id) },
      ],
      created: 0,
      updated: 0,
      unchanged: 2,
      errors: 0,
      dry_run: false,
    });
    expect(await userCount()).toBe(before);
    expect(await auditEvents(app.dataSource, 'user.import')).toHaveLength(1);
  });

  it('answers a dry run with 200 "Import checked" and changes nothing', async () => {
    const res = await send('username,email\nann,ann@example.edu\nroot,root@example.edu\n', '?dry_run=true');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      message: 'Import checked',
      data: {
        rows: [
          { line: 2, action: 'create', username: 'ann', id: null },
          { line: 3, action: 'unchanged', username: 'root', id: Number(admin.id) },
        ],
        created: 1,
        updated: 0,
        unchanged: 1,
        errors: 0,
        dry_run: true,
      },
    });
    expect(await userCount()).toBe(1);
    expect(await auditEvents(app.dataSource)).toEqual([]);
  });

  it('answers 422 with every row when any row is wrong, and creates nobody', async () => {
    await makeUser(app.dataSource, { username: 'carol', email: 'carol@example.edu' });
    const res = await send(
      [
        'username,email,admin,password',
        'ann,ann@example.edu,,',
        'x,not-an-email,maybe,short',
        'carol,root@example.edu,,',
        'dave,carol@example.edu,,',
        'ANN,dave@example.edu,,',
        'erin,ANN@example.edu,,',
      ].join('\n'),
    );
    expect(res.status).toBe(422);
    expect(res.body.success).toBe(false);
    expect(res.body.message).toBe('Import has errors; nothing was changed');
    expect(res.body.data).toEqual({
      rows: [
        { line: 2, action: 'create', username: 'ann', id: null },
        {
          line: 3,
          action: 'error',
          username: 'x',
          id: null,
          errors: [
            USERNAME_MESSAGE,
            'Email must be a valid email address',
            'Password must be 8-128 characters',
            'admin must be a boolean',
          ],
        },
        { line: 4, action: 'error', username: 'carol', id: null, errors: [CLASH] },
        { line: 5, action: 'error', username: 'dave', id: null, errors: [CLASH] },
        { line: 6, action: 'error', username: 'ANN', id: null, errors: ['Duplicate username in file'] },
        { line: 7, action: 'error', username: 'erin', id: null, errors: ['Duplicate email in file'] },
      ],
      created: 1,
      updated: 0,
      unchanged: 0,
      errors: 5,
      dry_run: false,
    });
    expect(await userCount()).toBe(2);
    expect(await auditEvents(app.dataSource)).toEqual([]);
  });

  it('answers a NUL character in a username or email as a row error, not a failure', async () => {
    const res = await send('username,email\nok\u0000name,ok@example.edu\nfine,bad\u0000@example.edu\n');
    expect(res.status).toBe(422);
    expect(res.body.data.rows.map((row: { action: string }) => row.action)).toEqual(['error', 'error']);
    expect(await userCount()).toBe(1);
  });

  it('answers 422 to a dry run with errors too', async () => {
    const res = await send('username,email\nx,y\n', '?dry_run=true');
    expect(res.status).toBe(422);
    expect(res.body.data.dry_run).toBe(true);
  });

  it('reads a BOM, semicolons, header names in any case and order, unknown columns, and counts blank lines', async () => {
    const file = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(
        'Email;NOTES;UserName\r\n\r\nann@example.edu;"a; b";ann\r\n\r\n\r\nbob@example.edu;;bob\r\n',
        'utf8',
      ),
    ]);
    const res = await send(file);
    expect(res.status).toBe(201);
    expect(
      res.body.data.rows.map((row: { line: number; username: string }) => [row.line, row.username]),
    ).toEqual([
      [3, 'ann'],
      [6, 'bob'],
    ]);
  });

  it('takes the file as the multipart part "file"', async () => {
    const res = await postCsvForm(app.url, '/api/users/import', token, [
      { name: 'note', text: 'ignored' },
      { name: 'file', filename: 'users.csv', text: 'username,email\nann,ann@example.edu\n' },
    ]);
    expect(res.status).toBe(201);
    expect(res.body.data.created).toBe(1);
    const none = await postCsvForm(app.url, '/api/users/import', token, [{ name: 'note', text: 'x' }]);
    expect(none).toEqual({ status: 400, body: failure('No file uploaded') });
    const two = await postCsvForm(app.url, '/api/users/import', token, [
      { name: 'file', filename: 'a.csv', text: 'username,email\nbob,bob@example.edu\n' },
      { name: 'file', filename: 'b.csv', text: 'username,email\ncid,cid@example.edu\n' },
    ]);
    expect(two).toEqual({ status: 400, body: failure('Only one file may be uploaded') });
    expect(await userCount()).toBe(2);
  });

  it('answers 413 to more than 100 parts, as the avatar upload does', async () => {
    const res = await postCsvForm(app.url, '/api/users/import', token, [
      { name: 'file', filename: 'users.csv', text: 'username,email\nann,ann@example.edu\n' },
      ...Array.from({ length: 100 }, (_, i) => ({ name: `note${i}`, text: 'x' })),
    ]);
    expect(res).toEqual({ status: 413, body: failure('Request body too large') });
    expect(await userCount()).toBe(1);
  });

  it.each([
    ['a missing required column', 'username,admin\nann,true\n', 'Missing column: email'],
    ['a header alone', 'username,email\r\n\r\n', 'The file has no rows'],
    ['an empty body', '', 'The file has no rows'],
    [
      'an unclosed quote',
      'username,email\nann,ann@example.edu\n\n"bob,bob@example.edu\ncid,c@example.edu\n',
      'Malformed CSV at line 4',
    ],
    [
      'more fields than the header',
      'username,email\nann,ann@example.edu\nbob,bob@example.edu,extra\n',
      'Malformed CSV at line 3',
    ],
    [
      'a line over 65536 characters',
      `username,email,note\nann,ann@example.edu,\nbob,bob@example.edu,${'n'.repeat(65_536)}\n`,
      'Malformed CSV at line 3',
    ],
    [
      'an unclosed quote running past 65536 characters',
      `username,email\nann,ann@example.edu\n"bob,bob@example.edu\n${'cid,cid@example.edu\n'.repeat(4000)}`,
      'Malformed CSV at line 3',
    ],
    [
      'a header of more than 256 columns',
      `username,email,${Array.from({ length: 255 }, (_, i) => `c${i}`).join(',')}\nann,ann@example.edu\n`,
      'At most 256 columns are allowed per import',
    ],
  ])('answers 400 to %s', async (_case, file, message) => {
    const res = await send(file);
    expect(res).toMatchObject({ status: 400, body: failure(message) });
    expect(await userCount()).toBe(1);
  });

  it('answers 413 past 5 MiB or 10000 rows, and 400 to a bad dry_run', async () => {
    const big = `username,email\n${'x'.repeat(5 * 1024 * 1024)}\n`;
    expect(await send(big)).toMatchObject({ status: 413, body: failure('Import file too large') });
    const rows = Array.from({ length: 10_001 }, (_, i) => `u${i},u${i}@example.edu`).join('\n');
    expect(await send(`username,email\n${rows}\n`)).toMatchObject({
      status: 413,
      body: failure('At most 10000 rows are allowed per import'),
    });
    expect(await send('username,email\nann,ann@example.edu\n', '?dry_run=yes')).toMatchObject({
      status: 400,
      body: failure('dry_run must be true or false'),
    });
    expect(await userCount()).toBe(1);
  });

  it('answers 413 while streaming a chunked body past 5 MiB', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(Buffer.from('username,email\n'));
        for (let i = 0; i < 6; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const response = await fetch(`${app.url}/api/users/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv' },
      body,
      duplex: 'half',
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual(failure('Import file too large'));
  });

  it('refuses other content types (415), callers without a token (401) and non-admins (403)', async () => {
    expect(await api.post('/api/users/import', { token, body: { username: 'ann' } })).toMatchObject({
      status: 415,
      body: failure('Unsupported content type'),
    });
    expect(await postCsv(api, '/api/users/import', undefined, 'username,email\n')).toMatchObject({
      status: 401,
    });
    const user = await makeUser(app.dataSource);
    expect(
      await postCsv(api, '/api/users/import', tokenFor(user), 'username,email\na1a,a@b.cd\n'),
    ).toMatchObject({
      status: 403,
    });
    // Other routes still refuse a CSV body.
    expect(await postCsv(api, '/api/users', token, 'username,email\n')).toMatchObject({
      status: 415,
      body: failure('Unsupported content type'),
    });
  });

  it('imports 10000 users in one request, then re-imports them changing nothing', async () => {
    const rows = Array.from(
      { length: 10_000 },
      (_, i) => `student${i},student${i}@example.edu,${i % 100 === 0}`,
    );
    const file = `username,email,admin\n${rows.join('\n')}\n`;
    let peak = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const baseline = process.memoryUsage().rss;
    const started = performance.now();
    const res = await send(file);
    const elapsed = performance.now() - started;
    clearInterval(sampler);
    expect(res.status).toBe(201);
    expect(res.body.data.created).toBe(10_000);
    expect(await userCount()).toBe(10_001);
    const again = await send(file);
    expect(again.body.data).toMatchObject({ created: 0, unchanged: 10_000, errors: 0 });
    expect(await userCount()).toBe(10_001);
    expect(await auditEvents(app.dataSource, 'user.import')).toHaveLength(1);
    // Figures for the record (docs/csv.md); the service and this test share one process.
    process.stdout.write(
      `10000-row import: ${Math.round(elapsed)} ms, peak RSS ${Math.round(peak / 1048576)} MiB ` +
        `(+${Math.round((peak - baseline) / 1048576)} MiB)\n`,
    );
  }, 120_000);
}
