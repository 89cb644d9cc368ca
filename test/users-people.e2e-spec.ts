import { ModuleRole } from '../src/course-modules/membership/module-role.js';
import { USER_ACCOUNT_FIELDS, USER_SUMMARY_FIELDS } from '../src/users/user.shape.js';
import { useTestApp } from './support/app.js';
import { auditEvents, csvLines, postCsv } from './support/csv.js';
import { assignRole, makeModule, makeUser, tokenFor, type UserRow } from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';

const PASSWORD = 'correct-horse-battery';

describe('people fields of a user (docs/api.md §14, §3, §5)', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let token: string;

  beforeEach(async () => {
    ({ admin, token } = await freshAdmin(app, { username: 'root', email: 'root@example.edu' }));
  });

  const create = (body: Record<string, unknown>) => api.post('/api/users', { token, body });
  const jane = {
    username: 'jane.doe@uni.edu',
    email: 'jane.doe@uni.edu',
    password: PASSWORD,
    given_name: 'Jane',
    family_name: 'Doe',
    display_name: 'Jane Doe',
    external_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  };

  describe('create, read, update', () => {
    it('creates a user with names, external_id and active, answering them in the contract order', async () => {
      const res = await create(jane);
      expect(res.status).toBe(201);
      expect(Object.keys(res.body.data)).toEqual(USER_ACCOUNT_FIELDS);
      expect(res.body.data).toMatchObject({
        username: 'jane.doe@uni.edu',
        given_name: 'Jane',
        family_name: 'Doe',
        display_name: 'Jane Doe',
        active: true,
        external_id: jane.external_id,
      });
      const read = await api.get(`/api/users/${res.body.data.id}`, { token });
      expect(read.body.data).toEqual(res.body.data);
    });

    it('gives a user created without them nulls and active true', async () => {
      const res = await create({ username: 'plain', email: 'plain@example.edu', password: PASSWORD });
      expect(res.body.data).toMatchObject({
        given_name: null,
        family_name: null,
        display_name: null,
        active: true,
        external_id: null,
      });
      const inactive = await create({
        username: 'gone',
        email: 'gone@example.edu',
        password: PASSWORD,
        active: false,
        given_name: null,
      });
      expect(inactive.status).toBe(201);
      expect(inactive.body.data).toMatchObject({ active: false, given_name: null });
    });

    it.each([
      ['a username with @ and +', { username: 'a+b@uni.edu' }, 201, undefined],
      ['a 128-character username', { username: 'u'.repeat(128) }, 201, undefined],
      [
        'a 129-character username',
        { username: 'u'.repeat(129) },
        400,
        "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'",
      ],
      [
        'a username with a space',
        { username: 'jane doe' },
        400,
        "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'",
      ],
      [
        'a 101-character given_name',
        { given_name: 'g'.repeat(101) },
        400,
        'given_name must be at most 100 characters',
      ],
      ['a numeric family_name', { family_name: 5 }, 400, 'family_name must be at most 100 characters'],
      [
        'a 201-character display_name',
        { display_name: 'd'.repeat(201) },
        400,
        'display_name must be at most 200 characters',
      ],
      ['an empty external_id', { external_id: '' }, 400, 'external_id must be 1-255 characters'],
      [
        'a 256-character external_id',
        { external_id: 'e'.repeat(256) },
        400,
        'external_id must be 1-255 characters',
      ],
      ['a string active', { active: 'false' }, 400, 'active must be a boolean'],
      ['a null active', { active: null }, 400, 'active must be a boolean'],
    ])('checks %s', async (_name, overrides, status, message) => {
      const res = await create({
        username: 'someone',
        email: 'someone@example.edu',
        password: PASSWORD,
        ...overrides,
      });
      expect(res.status).toBe(status);
      if (message !== undefined) expect(res.body).toEqual({ success: false, data: null, message });
    });

    it('counts characters as code points: 100 emoji make a valid given_name', async () => {
      const res = await create({ ...jane, external_id: null, given_name: '😀'.repeat(100) });
      expect(res.status).toBe(201);
      expect(res.body.data.given_name).toBe('😀'.repeat(100));
    });

    it('joins every failing rule in field order', async () => {
      const res = await create({
        username: 'x',
        email: 'y',
        password: PASSWORD,
        given_name: 'g'.repeat(101),
        active: 1,
      });
      expect(res.body.message).toBe(
        "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'; " +
          'Email must be a valid email address; given_name must be at most 100 characters; active must be a boolean',
      );
    });

    it('keeps external_id unique, case-sensitively: 409 on create and on PUT', async () => {
      const first = await create(jane);
      const clash = await create({ ...jane, username: 'other', email: 'other@example.edu' });
      expect(clash.status).toBe(409);
      expect(clash.body).toEqual({
        success: false,
        data: null,
        message: 'A user with this external ID already exists',
      });
      const otherCase = await create({
        ...jane,
        username: 'other',
        email: 'other@example.edu',
        external_id: jane.external_id.toUpperCase(),
      });
      expect(otherCase.status).toBe(201);
      const put = await api.put(`/api/users/${otherCase.body.data.id}`, {
        token,
        body: { external_id: jane.external_id },
      });
      expect(put.status).toBe(409);
      expect(put.body.message).toBe('A user with this external ID already exists');
      // Several users without one are fine.
      for (const n of [1, 2])
        expect(
          (await create({ username: `n${n}x`, email: `n${n}@example.edu`, password: PASSWORD })).status,
        ).toBe(201);
      expect(first.status).toBe(201);
    });

    it('refuses an external_id clash in a bulk create, creating nothing', async () => {
      await create(jane);
      const res = await api.post('/api/users/bulk', {
        token,
        body: {
          users: [
            { username: 'bulk1', email: 'bulk1@example.edu', password: PASSWORD },
            {
              username: 'bulk2',
              email: 'bulk2@example.edu',
              password: PASSWORD,
              external_id: jane.external_id,
            },
          ],
        },
      });
      expect(res.status).toBe(409);
      expect(res.body.message).toBe('A user with this external ID already exists');
      const [{ count }] = await app.dataSource.query(
        `SELECT count(*)::int AS count FROM users WHERE username LIKE 'bulk%'`,
      );
      expect(count).toBe(0);
    });

    it('takes the fields in bulk create, validated per entry', async () => {
      const res = await api.post('/api/users/bulk', {
        token,
        body: {
          users: [
            { username: 'b1', email: 'b1@example.edu', password: PASSWORD, given_name: 'x'.repeat(101) },
            { username: 'bob', email: 'bob@example.edu', password: PASSWORD, active: 'yes' },
          ],
        },
      });
      expect(res.body.message).toBe(
        "users[0]: Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'; " +
          'users[0]: given_name must be at most 100 characters; users[1]: active must be a boolean',
      );
      const ok = await api.post('/api/users/bulk', {
        token,
        body: {
          users: [
            {
              username: 'ann',
              email: 'ann@example.edu',
              password: PASSWORD,
              display_name: 'Ann',
              active: false,
            },
            { username: 'bob', email: 'bob@example.edu', password: PASSWORD, external_id: 'B-1' },
          ],
        },
      });
      expect(ok.status).toBe(201);
      expect(ok.body.data.map((u: any) => [u.display_name, u.active, u.external_id])).toEqual([
        ['Ann', false, null],
        [null, true, 'B-1'],
      ]);
    });

    it('changes the fields with PUT (null clears), audits each change and writes a user.updated event', async () => {
      const created = (await create(jane)).body.data;
      const res = await api.put(`/api/users/${created.id}`, {
        token,
        body: { given_name: 'Janet', display_name: null, external_id: 'NEW-1' },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        given_name: 'Janet',
        family_name: 'Doe',
        display_name: null,
        external_id: 'NEW-1',
      });
      const [audit] = await auditEvents(app.dataSource, 'user.update');
      expect(audit.summary).toEqual({
        given_name: { from: 'Jane', to: 'Janet' },
        display_name: { from: 'Jane Doe', to: null },
        external_id: { from: jane.external_id, to: 'NEW-1' },
      });
      const [event] = await app.dataSource.query(
        `SELECT data FROM change_events WHERE type = 'user.updated' ORDER BY id DESC LIMIT 1`,
      );
      expect(event.data).toEqual(res.body.data);
    });

    it('counts a PUT with only the new fields as a change (not "At least one field must be provided")', async () => {
      const created = (await create(jane)).body.data;
      const res = await api.put(`/api/users/${created.id}`, { token, body: { family_name: 'Smith' } });
      expect(res.status).toBe(200);
      expect(res.body.data.family_name).toBe('Smith');
    });

    it('puts external_id in the user.created event', async () => {
      await create(jane);
      const [event] = await app.dataSource.query(
        `SELECT data FROM change_events WHERE type = 'user.created'`,
      );
      expect(event.data).toMatchObject({
        username: jane.username,
        external_id: jane.external_id,
        active: true,
      });
    });
  });

  describe('where external_id shows', () => {
    it('shows it to the caller on /api/auth/me and login, and leaves it out of module routes', async () => {
      const created = (await create({ ...jane, admin: false })).body.data;
      const login = await api.post('/api/auth/login', {
        body: { username: 'JANE.DOE@uni.edu', password: PASSWORD },
      });
      expect(login.status).toBe(200);
      expect(login.body.data.user.external_id).toBe(jane.external_id);
      const me = await api.get('/api/auth/me', { token: login.body.data.token });
      expect(Object.keys(me.body.data)).toEqual(USER_ACCOUNT_FIELDS);
      expect(me.body.data.given_name).toBe('Jane');

      const module = await makeModule(app.dataSource);
      await assignRole(app.dataSource, created.id, module.id, ModuleRole.Student);
      const lecturer = await makeUser(app.dataSource);
      await assignRole(app.dataSource, lecturer.id, module.id, ModuleRole.Lecturer);
      const single = await api.get(`/api/modules/${module.id}`, { token: tokenFor(lecturer) });
      expect(single.status).toBe(200);
      expect(Object.keys(single.body.data.students[0])).toEqual(USER_SUMMARY_FIELDS);
      expect(single.body.data.students[0]).toMatchObject({ given_name: 'Jane', display_name: 'Jane Doe' });
      const students = await api.get(`/api/modules/${module.id}/students`, { token: tokenFor(lecturer) });
      expect(students.body.data.users[0]).not.toHaveProperty('external_id');
      expect(students.body.data.users[0]).toMatchObject({ given_name: 'Jane', active: true });
      const eligible = await api.get(`/api/modules/${module.id}/personnel/eligible`, {
        token: tokenFor(lecturer),
      });
      expect(eligible.body.data.users.length).toBeGreaterThan(0);
      for (const user of eligible.body.data.users) expect(Object.keys(user)).toEqual(USER_SUMMARY_FIELDS);
    });
  });

  describe('GET /api/users filters', () => {
    beforeEach(async () => {
      await create({ ...jane });
      await create({
        username: 'bob',
        email: 'bob@example.edu',
        password: PASSWORD,
        family_name: 'Smithson',
        active: false,
      });
    });

    const names = async (query: string) => {
      const res = await api.get(`/api/users?${query}`, { token });
      expect(res.status).toBe(200);
      return res.body.data.users.map((u: any) => u.username);
    };

    it('filters by active', async () => {
      expect(await names('active=false')).toEqual(['bob']);
      expect(await names('active=true')).toEqual(['root', 'jane.doe@uni.edu']);
    });

    it('answers 400 for an active that is not true or false', async () => {
      const res = await api.get('/api/users?active=yes', { token });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message: 'active must be true or false' });
    });

    it('matches query against the names and external_id, case-insensitively', async () => {
      expect(await names('query=SMITHS')).toEqual(['bob']);
      expect(await names('query=jane%20doe')).toEqual(['jane.doe@uni.edu']);
      expect(await names('query=70867728950E')).toEqual(['jane.doe@uni.edu']);
      expect(await names('query=jane&active=false')).toEqual([]);
    });
  });

  describe('CSV', () => {
    it('exports the new columns, in the contract order', async () => {
      await create(jane);
      const res = await fetch(`${app.url}/api/users/export.csv?sort=username`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const lines = csvLines(await res.text());
      expect(lines[0]).toBe(
        'id,username,email,admin,created_at,updated_at,given_name,family_name,display_name,external_id,active',
      );
      expect(lines[1]).toMatch(
        /^\d+,jane\.doe@uni\.edu,jane\.doe@uni\.edu,false,[^,]+,[^,]+,Jane,Doe,Jane Doe,0f8fad5b-d9cb-469f-a165-70867728950e,true$/,
      );
      expect(lines[2]).toMatch(new RegExp(`^${admin.id},root,root@example.edu,true,[^,]+,[^,]+,,,,,true$`));
    });

    it('imports the new columns: create with them, update what differs, unchanged on a second run', async () => {
      await makeUser(app.dataSource, { username: 'ada', email: 'ada@example.edu' });
      const file =
        'username,email,given_name,family_name,display_name,external_id,active\r\n' +
        'ada,ada@example.edu,Ada,Lovelace,,A-1,false\r\n' +
        'new.person@uni.edu,new.person@uni.edu,New,Person,New Person,N-1,\r\n';
      const dry = await postCsv(api, '/api/users/import?dry_run=true', token, file);
      expect(dry.status).toBe(200);
      expect(dry.body.data).toEqual({
        rows: [
          { line: 2, action: 'update', username: 'ada', id: expect.any(Number) },
          { line: 3, action: 'create', username: 'new.person@uni.edu', id: null },
        ],
        created: 1,
        updated: 1,
        unchanged: 0,
        errors: 0,
        dry_run: true,
      });
      const applied = await postCsv(api, '/api/users/import', token, file);
      expect(applied.status).toBe(201);
      expect(applied.body.message).toBe('Users imported');
      expect(applied.body.data).toMatchObject({ created: 1, updated: 1, unchanged: 0 });
      const stored = await app.dataSource.query(
        `SELECT username, given_name, family_name, display_name, external_id, active FROM users
         WHERE username IN ('ada', 'new.person@uni.edu') ORDER BY username`,
      );
      expect(stored).toEqual([
        {
          username: 'ada',
          given_name: 'Ada',
          family_name: 'Lovelace',
          display_name: null,
          external_id: 'A-1',
          active: false,
        },
        {
          username: 'new.person@uni.edu',
          given_name: 'New',
          family_name: 'Person',
          display_name: 'New Person',
          external_id: 'N-1',
          active: true,
        },
      ]);
      const events = await app.dataSource.query(`SELECT type, data FROM change_events ORDER BY id`);
      expect(events.map((e: any) => [e.type, e.data.username, e.data.external_id])).toEqual([
        ['user.created', 'new.person@uni.edu', 'N-1'],
        ['user.updated', 'ada', 'A-1'],
      ]);
      const [audit] = await auditEvents(app.dataSource, 'user.import');
      expect(audit.summary).toEqual({
        users: [{ username: 'new.person@uni.edu' }],
        updated: [
          {
            username: 'ada',
            given_name: { from: null, to: 'Ada' },
            family_name: { from: null, to: 'Lovelace' },
            external_id: { from: null, to: 'A-1' },
            active: { from: true, to: false },
          },
        ],
      });

      const again = await postCsv(api, '/api/users/import', token, file);
      expect(again.body.data).toMatchObject({ created: 0, updated: 0, unchanged: 2 });
      // A file without the §14 columns changes none of them.
      const plain = await postCsv(
        api,
        '/api/users/import',
        token,
        'username,email\r\nada,ada@example.edu\r\n',
      );
      expect(plain.body.data.rows).toEqual([
        { line: 2, action: 'unchanged', username: 'ada', id: expect.any(Number) },
      ]);
    });

    it('never changes admin or the password of a stored user', async () => {
      const ada = await makeUser(app.dataSource, { username: 'ada', email: 'ada@example.edu' });
      const res = await postCsv(
        api,
        '/api/users/import',
        token,
        'username,email,admin,password,given_name\r\nada,ada@example.edu,true,another-password,Ada\r\n',
      );
      expect(res.body.data.rows[0].action).toBe('update');
      const [row] = await app.dataSource.query(`SELECT admin FROM users WHERE id = $1`, [ada.id]);
      expect(row.admin).toBe(false);
      const login = await api.post('/api/auth/login', { body: { username: 'ada', password: PASSWORD } });
      expect(login.status).toBe(200);
    });

    it('reports the row errors of §9 and changes nothing', async () => {
      await makeUser(app.dataSource, { username: 'ada', email: 'ada@example.edu' });
      await create({ ...jane });
      const file =
        'username,email,external_id,active,given_name\r\n' +
        `kim,kim@example.edu,${jane.external_id},,\r\n` +
        'lee,lee@example.edu,L-1,maybe,\r\n' +
        'max,max@example.edu,L-1,,\r\n' +
        `ada,ada@example.edu,,,${'g'.repeat(101)}\r\n`;
      const res = await postCsv(api, '/api/users/import', token, file);
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('Import has errors; nothing was changed');
      expect(res.body.data.rows.map((row: any) => [row.line, row.action, row.errors])).toEqual([
        [2, 'error', ['A user with this external ID already exists']],
        [3, 'error', ['active must be a boolean']],
        [4, 'error', ['Duplicate external_id in file']],
        [5, 'error', ['given_name must be at most 100 characters']],
      ]);
      const [{ count }] = await app.dataSource.query(`SELECT count(*)::int AS count FROM users`);
      expect(count).toBe(3);
    });
  });
});
