// Users' accounts: create, email addresses, manage, inactive users, people's names and identifiers.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import { jest } from '@jest/globals';
import { Clock } from '../src/core/clock.js';
import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import { USER_ACCOUNT_FIELDS, USER_SUMMARY_FIELDS } from '../src/users/user.shape.js';
import { startTestApp, type TestApp, useTestApp } from './support/app.js';
import { auditEvents, csvLines, postCsv } from './support/csv.js';
import {
  assignRole,
  DEFAULT_PASSWORD,
  makeModule,
  makeUser,
  tokenFor,
  type UserRow,
} from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';
import { client, type Client } from './support/http.js';
import { TEST_AUDIENCE, TestIdp } from './support/idp.js';
import { conformingClient, DocumentValidator, fetchDocument } from './support/openapi.js';
import { nextSecond } from './support/users-helpers.js';

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

const PASSWORD_MESSAGE = 'Password must be 8-128 characters';
const USERNAME_MESSAGE = "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'";
const EMAIL_MESSAGE = 'Email must be a valid email address';

describe('Users API: create and bulk create', () => {
  const { app, api } = useTestApp();
  let token: string;

  beforeEach(async () => {
    ({ token } = await freshAdmin(app, { username: 'root', email: 'root@example.edu' }));
  });

  const userCount = async () => Number((await app.dataSource.query(`SELECT count(*) AS n FROM users`))[0].n);
  const login = (username: string, password: string) =>
    api.post('/api/auth/login', { body: { username, password } });

  describe('POST /api/users', () => {
    const create = (body: unknown) => api.post('/api/users', { token, body });
    const valid = { username: 'jsmith', email: 'J.Smith@Example.EDU', password: 'long-enough-1' };

    it('creates a user and answers 201 with its User summary, email lower-cased', async () => {
      const res = await create(valid);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        message: 'User created successfully',
        data: {
          id: expect.any(Number),
          username: 'jsmith',
          email: 'j.smith@example.edu',
          given_name: null,
          family_name: null,
          display_name: null,
          active: true,
          admin: false,
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          updated_at: res.body.data.created_at,
          avatar_url: null,
          external_id: null,
        },
      });
      const [row] = await app.dataSource.query(`SELECT * FROM users WHERE id = $1`, [res.body.data.id]);
      expect(row.email).toBe('j.smith@example.edu');
      expect(row.password_hash).toMatch(/^\$argon2id\$/);
      expect((await login('JSMITH', 'long-enough-1')).status).toBe(200);
    });

    it('creates an administrator when admin is true', async () => {
      const res = await create({ ...valid, admin: true });
      expect(res.body.data.admin).toBe(true);
      const me = await api.get('/api/users', {
        token: (await login('jsmith', valid.password)).body.data.token,
      });
      expect(me.status).toBe(200);
    });

    it.each([
      ['username of 3 characters', { username: 'abc' }],
      ['username of 64 characters', { username: 'a'.repeat(64) }],
      ['username of dots, dashes and underscores', { username: 'a.b_c-D9' }],
      ['password of 8 characters', { password: '12345678' }],
      ['password of 128 characters', { password: 'p'.repeat(128) }],
      ['password of 128 astral code points', { password: '😀'.repeat(128) }],
      ['password of 8 astral code points', { password: '😀'.repeat(8) }],
    ])('accepts a %s', async (_case, override) => {
      expect((await create({ ...valid, ...override })).status).toBe(201);
    });

    it.each([
      ['username of 2 characters', { username: 'ab' }, USERNAME_MESSAGE],
      ['username of 129 characters', { username: 'a'.repeat(129) }, USERNAME_MESSAGE],
      ['username with a space', { username: 'j smith' }, USERNAME_MESSAGE],
      ['username with a non-ASCII letter', { username: 'émile' }, USERNAME_MESSAGE],
      ['username with a comma', { username: 'j,smith' }, USERNAME_MESSAGE],
      ['numeric username', { username: 12345 }, USERNAME_MESSAGE],
      ['null username', { username: null }, USERNAME_MESSAGE],
      ['email without a domain', { email: 'jsmith@' }, EMAIL_MESSAGE],
      ['email that is not an address', { email: 'not an email' }, EMAIL_MESSAGE],
      ['email that is a number', { email: 42 }, EMAIL_MESSAGE],
      ['password of 7 characters', { password: '1234567' }, PASSWORD_MESSAGE],
      ['password of 129 characters', { password: 'p'.repeat(129) }, PASSWORD_MESSAGE],
      ['password of 7 astral code points', { password: '😀'.repeat(7) }, PASSWORD_MESSAGE],
      ['password of 129 astral code points', { password: '😀'.repeat(129) }, PASSWORD_MESSAGE],
      ['numeric password', { password: 12345678 }, PASSWORD_MESSAGE],
      ['admin as a string', { admin: 'true' }, 'admin must be a boolean'],
      ['admin as null', { admin: null }, 'admin must be a boolean'],
      ['admin as a number', { admin: 1 }, 'admin must be a boolean'],
    ])('answers 400 for a %s and creates nothing', async (_case, override, message) => {
      const res = await create({ ...valid, ...override });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message });
      expect(await userCount()).toBe(1);
    });

    it('reports every missing field in field order, unknown properties last', async () => {
      const res = await create({ role: 'x' });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(
        `${USERNAME_MESSAGE}; ${EMAIL_MESSAGE}; ${PASSWORD_MESSAGE}; property role should not exist`,
      );
    });

    it('rejects unknown properties', async () => {
      const res = await create({ ...valid, is_admin: true });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('property is_admin should not exist');
    });

    it('answers 400 for a body that is not an object, malformed or empty JSON', async () => {
      expect((await create([valid])).body.message).toBe('Request body must be a JSON object');
      const malformed = await create('{"username": ');
      expect(malformed.status).toBe(400);
      expect(malformed.body.message).toBe('Malformed JSON body');
      const empty = await api.post('/api/users', {
        token,
        headers: { 'content-type': 'application/json' },
        body: '',
      });
      expect(empty.body).toEqual({ success: false, data: null, message: 'Malformed JSON body' });
    });

    it('answers 415 for a body that is not JSON', async () => {
      const res = await api.post('/api/users', {
        token,
        body: 'username=jsmith',
        headers: { 'content-type': 'text/plain' },
      });
      expect(res.status).toBe(415);
      expect(res.body.message).toBe('Unsupported content type');
    });

    it('answers 409 for a username taken in another case, creating nothing', async () => {
      await makeUser(app.dataSource, { username: 'JSmith', email: 'other@example.edu' });
      const res = await create(valid);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        success: false,
        data: null,
        message: 'A user with this username already exists',
      });
      expect(await userCount()).toBe(2);
    });

    it('answers 409 for an email taken in another case, creating nothing', async () => {
      await makeUser(app.dataSource, { username: 'other', email: 'j.smith@example.edu' });
      const res = await create(valid);
      expect(res.status).toBe(409);
      expect(res.body.message).toBe('A user with this email already exists');
      expect(await userCount()).toBe(2);
    });

    it('answers 401 without a token and 403 for a non-admin, creating nothing', async () => {
      expect((await api.post('/api/users', { body: valid })).status).toBe(401);
      const member = await makeUser(app.dataSource);
      const res = await api.post('/api/users', { token: tokenFor(member), body: valid });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe('You do not have permission to perform this action');
      expect(await userCount()).toBe(2);
    });
  });

  describe('POST /api/users/bulk', () => {
    const bulk = (body: unknown) => api.post('/api/users/bulk', { token, body });
    const entry = (name: string, extra: Record<string, unknown> = {}) => ({
      username: name,
      email: `${name}@Example.edu`,
      password: `password-of-${name}`,
      ...extra,
    });

    it('creates every user and answers 201 with their summaries in input order', async () => {
      const res = await bulk({ users: [entry('zoe'), entry('adam', { admin: true }), entry('mia')] });
      expect(res.status).toBe(201);
      expect(res.body.message).toBe('Users created successfully');
      expect(res.body.success).toBe(true);
      expect(res.body.data.map((user: any) => [user.username, user.email, user.admin])).toEqual([
        ['zoe', 'zoe@example.edu', false],
        ['adam', 'adam@example.edu', true],
        ['mia', 'mia@example.edu', false],
      ]);
      for (const user of res.body.data) {
        expect(Object.keys(user)).toEqual(USER_ACCOUNT_FIELDS);
        expect(user.avatar_url).toBeNull();
      }
      const hashes = await app.dataSource.query(`SELECT password_hash FROM users WHERE username <> 'root'`);
      expect(hashes.every((row: any) => row.password_hash.startsWith('$argon2id$'))).toBe(true);
      expect((await login('adam', 'password-of-adam')).status).toBe(200);
    });

    it.each([
      ['an empty list', { users: [] }, 'At least one user is required'],
      ['no list', {}, 'At least one user is required'],
      ['a list that is not an array', { users: entry('x') }, 'users must be an array of users'],
      [
        '501 users',
        { users: Array.from({ length: 501 }, (_, i) => entry(`u${i}`)) },
        'At most 500 users are allowed per request',
      ],
    ])('answers 400 for %s', async (_case, body, message) => {
      const res = await bulk(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message });
      expect(await userCount()).toBe(1);
    });

    it('names each invalid entry by its index and creates nothing', async () => {
      const res = await bulk({
        users: [entry('ann', { password: 'short' }), entry('ben'), entry('cat', { email: 'nope' })],
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        data: null,
        message: `users[0]: ${PASSWORD_MESSAGE}; users[2]: ${EMAIL_MESSAGE}`,
      });
      expect(await userCount()).toBe(1);
    });

    it('prefixes every message of an entry, in field order, and reports entries that are not objects', async () => {
      const res = await bulk({ users: [{ admin: 'no', extra: 1 }, null, 'dan'] });
      expect(res.body.message).toBe(
        [
          `users[0]: ${USERNAME_MESSAGE}`,
          `users[0]: ${EMAIL_MESSAGE}`,
          `users[0]: ${PASSWORD_MESSAGE}`,
          'users[0]: admin must be a boolean',
          'users[0]: property extra should not exist',
          'users[1]: User must be a JSON object',
          'users[2]: User must be a JSON object',
        ].join('; '),
      );
    });

    it('reports unknown top-level properties after the entries', async () => {
      const res = await bulk({ users: [], dry_run: true });
      expect(res.body.message).toBe('At least one user is required; property dry_run should not exist');
    });

    it('answers 409 listing every value that clashes with a stored user, as sent, creating nothing', async () => {
      await makeUser(app.dataSource, { username: 'alice', email: 'alice@example.edu' });
      await makeUser(app.dataSource, { username: 'bob', email: 'bob@example.edu' });
      const res = await bulk({
        users: [
          entry('carl'),
          entry('ALICE', { email: 'new@example.edu' }),
          entry('dora', { email: 'Bob@Example.EDU' }),
        ],
      });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        success: false,
        data: null,
        message: 'A user with this username or email already exists: ALICE, Bob@Example.EDU',
      });
      expect(await userCount()).toBe(3);
    });

    it('lists clashes inside the batch once each, case-insensitively, in request order', async () => {
      const res = await bulk({
        users: [
          entry('erin', { email: 'shared@example.edu' }),
          entry('dave'),
          entry('Dave', { email: 'SHARED@example.edu' }),
          entry('DAVE'),
          entry('root'),
        ],
      });
      expect(res.status).toBe(409);
      expect(res.body.message).toBe(
        'A user with this username or email already exists: shared@example.edu, dave, dave@Example.edu, root, root@Example.edu',
      );
      expect(await userCount()).toBe(1);
    });

    it('validates every entry before looking for clashes', async () => {
      const res = await bulk({ users: [entry('root'), entry('x', { password: 'short' })] });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(`users[1]: ${USERNAME_MESSAGE}; users[1]: ${PASSWORD_MESSAGE}`);
    });

    it('answers 401 without a token and 403 for a non-admin, creating nothing', async () => {
      expect((await api.post('/api/users/bulk', { body: { users: [entry('a1b')] } })).status).toBe(401);
      const member = await makeUser(app.dataSource);
      const res = await api.post('/api/users/bulk', {
        token: tokenFor(member),
        body: { users: [entry('a1b')] },
      });
      expect(res.status).toBe(403);
      expect(await userCount()).toBe(2);
    });
  });
});

/**
 * An address whose domain is one label, such as the first administrator's default `admin@localhost`
 * (ADMIN_EMAIL): the service accepts it wherever it takes an email, and the document's schemas describe it, so a
 * validator driven by the document (Prism, Portman) does not refuse the service's own answers.
 */
describe('an email address with a one-label domain (admin@localhost)', () => {
  const { app } = useTestApp();
  let validator: DocumentValidator;

  beforeAll(async () => {
    validator = new DocumentValidator(await fetchDocument(app.url));
  });
  beforeEach(() => app.reset());

  it('is kept when the first administrator saves it again, taken for a new user, and valid in the document', async () => {
    const api = conformingClient(app.url, validator);
    const admin = await makeUser(app.dataSource, {
      username: 'admin',
      email: 'admin@localhost',
      admin: true,
    });
    const token = tokenFor(admin);

    const saved = await api.request('PUT', `/api/users/${admin.id}`, {
      token,
      body: { email: 'admin@localhost' },
    });
    expect(saved.status).toBe(200);
    expect(saved.body.data.email).toBe('admin@localhost');

    const created = await api.request('POST', '/api/users', {
      token,
      body: { username: 'ops', email: 'Ops@Intranet', password: DEFAULT_PASSWORD },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.email).toBe('ops@intranet');

    expect((await api.request('GET', '/api/auth/me', { token })).status).toBe(200);
    expect((await api.request('GET', `/api/users/${admin.id}`, { token })).status).toBe(200);
    expect(api.problems).toEqual([]);
  });

  it.each(['admin@', '@localhost', 'admin', 'ad min@localhost', 'admin@local host', 'admin@@localhost'])(
    'still refuses %j with the email message',
    async (email) => {
      const admin = await makeUser(app.dataSource, { admin: true });
      const res = await conformingClient(app.url, validator).request('PUT', `/api/users/${admin.id}`, {
        token: tokenFor(admin),
        body: { email },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        data: null,
        message: 'Email must be a valid email address',
      });
    },
  );
});

const PERMISSION_DENIED = 'You do not have permission to perform this action';

describe('Users API: read, update, delete, modules of a user', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let token: string;
  let user: UserRow;

  beforeEach(async () => {
    ({ admin, token } = await freshAdmin(app, { username: 'root', email: 'root@example.edu' }));
    user = await makeUser(app.dataSource, { username: 'jsmith', email: 'jsmith@example.edu' });
  });

  const stored = async (id: number) =>
    (await app.dataSource.query(`SELECT * FROM users WHERE id = $1`, [id]))[0];
  const login = (username: string, password: string) =>
    api.post('/api/auth/login', { body: { username, password } });

  describe('access', () => {
    const adminRoutes: { method: string; path: string; body?: unknown }[] = [
      { method: 'GET', path: '/api/users' },
      { method: 'POST', path: '/api/users', body: {} },
      { method: 'POST', path: '/api/users/bulk', body: { users: [] } },
      { method: 'GET', path: '/api/users/1' },
      { method: 'PUT', path: '/api/users/1', body: {} },
      { method: 'DELETE', path: '/api/users/1' },
      { method: 'GET', path: '/api/users/1/modules' },
    ];

    it.each(adminRoutes)(
      '$method $path needs a token (401) and an admin (403)',
      async ({ method, path, body }) => {
        const anonymous = await api.request(method, path, { body });
        expect(anonymous.status).toBe(401);
        expect(anonymous.body).toEqual({ success: false, data: null, message: 'Authentication required' });
        const member = await api.request(method, path, { body, token: tokenFor(user) });
        expect(member.status).toBe(403);
        expect(member.body).toEqual({ success: false, data: null, message: PERMISSION_DENIED });
      },
    );

    it('refuses a token claiming admin for a user who is not one', async () => {
      const res = await api.get(`/api/users/${user.id}`, { token: tokenFor({ id: user.id, admin: true }) });
      expect(res.status).toBe(403);
    });

    it('checks the admin right before the path id', async () => {
      const res = await api.get('/api/users/abc', { token: tokenFor(user) });
      expect(res.status).toBe(403);
    });
  });

  describe('GET /api/users/{user_id}', () => {
    it('answers 200 with the User summary', async () => {
      const res = await api.get(`/api/users/${user.id}`, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'User retrieved successfully',
        data: {
          id: Number(user.id),
          username: 'jsmith',
          email: 'jsmith@example.edu',
          given_name: null,
          family_name: null,
          display_name: null,
          active: true,
          admin: false,
          created_at: user.created_at.toISOString(),
          updated_at: user.updated_at.toISOString(),
          avatar_url: null,
          external_id: null,
        },
      });
    });

    it('answers 404 for an unknown user, including the largest 64-bit id', async () => {
      for (const id of ['999999999', '9223372036854775807']) {
        const res = await api.get(`/api/users/${id}`, { token });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ success: false, data: null, message: 'User not found' });
      }
    });

    it.each(['abc', '0', '-1', '1.5', '9223372036854775808', '1e3', '%2B1'])(
      'answers 400 for the id %s',
      async (id) => {
        const res = await api.get(`/api/users/${id}`, { token });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          success: false,
          data: null,
          message: 'user_id must be a positive integer',
        });
      },
    );
  });

  describe('PUT /api/users/{user_id}', () => {
    const update = (id: number | string, body: unknown, as = token) =>
      api.put(`/api/users/${id}`, { token: as, body });

    it('changes the username and bumps updated_at only', async () => {
      const res = await update(user.id, { username: 'John.Smith' });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('User updated successfully');
      expect(res.body.data).toMatchObject({
        id: Number(user.id),
        username: 'John.Smith',
        email: 'jsmith@example.edu',
        admin: false,
        created_at: user.created_at.toISOString(),
      });
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(user.updated_at.getTime());
      expect((await stored(user.id)).username).toBe('John.Smith');
    });

    it('stores a new email lower-cased', async () => {
      const res = await update(user.id, { email: 'New.Address@Example.EDU' });
      expect(res.body.data.email).toBe('new.address@example.edu');
      expect((await stored(user.id)).email).toBe('new.address@example.edu');
    });

    it('bumps updated_at even when the values are unchanged', async () => {
      const res = await update(user.id, { username: 'jsmith' });
      expect(res.status).toBe(200);
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(user.updated_at.getTime());
    });

    it('lets a user keep their username in another case', async () => {
      const res = await update(user.id, { username: 'JSMITH', email: 'JSMITH@example.edu' });
      expect(res.status).toBe(200);
      expect(res.body.data.username).toBe('JSMITH');
    });

    it('grants admin rights, which apply to the user at once', async () => {
      const memberToken = tokenFor({ id: user.id, admin: true });
      expect((await api.get('/api/users', { token: memberToken })).status).toBe(403);
      const res = await update(user.id, { admin: true });
      expect(res.body.data.admin).toBe(true);
      expect((await api.get('/api/users', { token: memberToken })).status).toBe(200);
    });

    it("removes another admin's rights, which applies to their token at once", async () => {
      const other = await makeUser(app.dataSource, { admin: true });
      const otherToken = tokenFor(other);
      expect((await api.get('/api/users', { token: otherToken })).status).toBe(200);
      const res = await update(other.id, { admin: false });
      expect(res.status).toBe(200);
      expect(res.body.data.admin).toBe(false);
      expect((await api.get('/api/users', { token: otherToken })).status).toBe(403);
    });

    it('changes the password: the new one logs in, the old one does not', async () => {
      const before = await stored(user.id);
      const res = await update(user.id, { password: 'a-brand-new-secret' });
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toMatch(/password|argon2/);
      const after = await stored(user.id);
      expect(after.password_hash).toMatch(/^\$argon2id\$/);
      expect(after.password_changed_at.getTime()).toBeGreaterThan(before.password_changed_at.getTime());
      expect((await login('jsmith', user.password)).status).toBe(401);
      expect((await login('jsmith', 'a-brand-new-secret')).status).toBe(200);
    });

    it("refuses the user's tokens issued before an admin changed the password", async () => {
      const oldToken = tokenFor(user);
      // Served once, so the 5-second access cache holds this user when the password changes.
      expect((await api.get('/api/auth/me', { token: oldToken })).status).toBe(200);
      await nextSecond();
      expect((await update(user.id, { password: 'a-brand-new-secret' })).status).toBe(200);
      const refused = await api.get('/api/auth/me', { token: oldToken });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ success: false, data: null, message: 'Invalid or expired token' });
      const fresh = (await login('jsmith', 'a-brand-new-secret')).body.data.token;
      expect((await api.get('/api/auth/me', { token: fresh })).status).toBe(200);
    });

    it('leaves tokens valid when only other fields change', async () => {
      const oldToken = tokenFor(user);
      await nextSecond();
      expect((await update(user.id, { username: 'renamed', email: 'r@example.edu' })).status).toBe(200);
      expect((await api.get('/api/auth/me', { token: oldToken })).status).toBe(200);
    });

    it('answers 403 to an admin removing their own admin rights, changing nothing', async () => {
      const res = await update(admin.id, { admin: false, username: 'renamed' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        success: false,
        data: null,
        message: 'You cannot remove your own admin rights',
      });
      const row = await stored(admin.id);
      expect([row.admin, row.username]).toEqual([true, 'root']);
    });

    it('lets an admin confirm their own admin flag and edit themselves', async () => {
      const res = await update(admin.id, { admin: true, username: 'root2' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ admin: true, username: 'root2' });
    });

    it('answers 400 when no field is given', async () => {
      const res = await update(user.id, {});
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        data: null,
        message: 'At least one field must be provided',
      });
    });

    it.each([
      [{ username: 'no' }, "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'"],
      [{ email: 'nope' }, 'Email must be a valid email address'],
      [{ password: 'short' }, 'Password must be 8-128 characters'],
      [{ admin: 'yes' }, 'admin must be a boolean'],
      [{ username: null }, "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'"],
      [{ password: null }, 'Password must be 8-128 characters'],
      [{ nickname: 'x' }, 'property nickname should not exist'],
      [
        { admin: 0, email: 'x', avatar_url: null },
        'Email must be a valid email address; admin must be a boolean; property avatar_url should not exist',
      ],
    ])('answers 400 for %j and changes nothing', async (body, message) => {
      const res = await update(user.id, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message });
      expect((await stored(user.id)).updated_at).toEqual(user.updated_at);
    });

    it('validates the body before looking the user up', async () => {
      expect((await update(999999999, { email: 'nope' })).status).toBe(400);
      expect((await update(999999999, {})).status).toBe(400);
      const res = await update(999999999, { username: 'valid-name' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, data: null, message: 'User not found' });
    });

    it('answers 400 for an invalid id', async () => {
      const res = await update('x1', { username: 'valid-name' });
      expect(res.body.message).toBe('user_id must be a positive integer');
    });

    it('answers 409 for a username taken in another case, changing nothing', async () => {
      const res = await update(user.id, { username: 'ROOT', email: 'fresh@example.edu' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        success: false,
        data: null,
        message: 'A user with this username already exists',
      });
      const row = await stored(user.id);
      expect([row.username, row.email]).toEqual(['jsmith', 'jsmith@example.edu']);
      expect(row.updated_at).toEqual(user.updated_at);
    });

    it('answers 409 for an email taken in another case, changing nothing', async () => {
      const res = await update(user.id, { email: 'Root@Example.edu', password: 'another-password' });
      expect(res.status).toBe(409);
      expect(res.body.message).toBe('A user with this email already exists');
      expect((await login('jsmith', user.password)).status).toBe(200);
    });
  });

  describe('DELETE /api/users/{user_id}', () => {
    it('deletes the user and their role assignments, answering data null', async () => {
      const module = await makeModule(app.dataSource);
      await assignRole(app.dataSource, user.id, module.id, ModuleRole.Student);
      const keep = await makeUser(app.dataSource);
      await assignRole(app.dataSource, keep.id, module.id, ModuleRole.Tutor);
      const userToken = tokenFor(user);

      const res = await api.delete(`/api/users/${user.id}`, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, data: null, message: 'User deleted successfully' });
      expect(await stored(user.id)).toBeUndefined();
      const roles = await app.dataSource.query(`SELECT user_id FROM user_module_roles`);
      expect(roles.map((row: any) => Number(row.user_id))).toEqual([Number(keep.id)]);
      expect((await api.get(`/api/users/${user.id}`, { token })).status).toBe(404);
      const gone = await api.get('/api/auth/me', { token: userToken });
      expect(gone.status).toBe(401);
      expect(gone.body.message).toBe('Invalid or expired token');
    });

    it('answers 403 to an admin deleting their own account, deleting nothing', async () => {
      const res = await api.delete(`/api/users/${admin.id}`, { token });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ success: false, data: null, message: 'You cannot delete your own account' });
      expect(await stored(admin.id)).toBeDefined();
    });

    it('answers 404 for an unknown user and 400 for an invalid id', async () => {
      const missing = await api.delete('/api/users/999999999', { token });
      expect(missing.status).toBe(404);
      expect(missing.body.message).toBe('User not found');
      const invalid = await api.delete('/api/users/0', { token });
      expect(invalid.status).toBe(400);
      expect(invalid.body.message).toBe('user_id must be a positive integer');
    });
  });

  describe('GET /api/users/{user_id}/modules', () => {
    it('lists the modules with the role held, by year descending then code', async () => {
      const a = await makeModule(app.dataSource, { code: 'BBB100', year: 2025, description: null });
      const b = await makeModule(app.dataSource, { code: 'AAA100', year: 2025 });
      const c = await makeModule(app.dataSource, { code: 'ZZZ100', year: 2026, credits: 30 });
      const other = await makeModule(app.dataSource, { code: 'CCC100', year: 2026 });
      await assignRole(app.dataSource, user.id, a.id, ModuleRole.Student);
      await assignRole(app.dataSource, user.id, b.id, ModuleRole.AssistantLecturer);
      await assignRole(app.dataSource, user.id, c.id, ModuleRole.Lecturer);
      await assignRole(app.dataSource, admin.id, other.id, ModuleRole.Tutor);

      const res = await api.get(`/api/users/${user.id}/modules`, { token });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Modules for user retrieved successfully');
      const wire = (module: typeof a, role: string) => ({
        id: Number(module.id),
        code: module.code,
        year: module.year,
        description: module.description,
        credits: module.credits,
        created_at: module.created_at.toISOString(),
        updated_at: module.updated_at.toISOString(),
        role,
      });
      expect(res.body.data).toEqual([wire(c, 'Lecturer'), wire(b, 'AssistantLecturer'), wire(a, 'Student')]);
    });

    it('answers an empty list for a user without roles', async () => {
      const res = await api.get(`/api/users/${user.id}/modules`, { token });
      expect(res.body).toEqual({
        success: true,
        data: [],
        message: 'Modules for user retrieved successfully',
      });
    });

    it('answers 404 for an unknown user and 400 for an invalid id', async () => {
      const missing = await api.get('/api/users/999999999/modules', { token });
      expect(missing.status).toBe(404);
      expect(missing.body.message).toBe('User not found');
      expect((await api.get('/api/users/abc/modules', { token })).status).toBe(400);
    });
  });
});

const INVALID_TOKEN = { success: false, data: null, message: 'Invalid or expired token' };
const INVALID_CREDENTIALS = { success: false, data: null, message: 'Invalid username or password' };

describe('inactive users (docs/api.md §14)', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let token: string;
  let jane: UserRow;

  beforeEach(async () => {
    ({ admin, token } = await freshAdmin(app, { username: 'root', email: 'root@example.edu' }));
    jane = await makeUser(app.dataSource, { username: 'jane', email: 'jane@example.edu' });
  });
  afterEach(() => jest.restoreAllMocks());

  /** Moves the service's clock (its user cache) forward, instead of waiting for entries to expire. */
  const advanceClock = (ms: number) => {
    const clock = app.service.app.get(Clock);
    const now = clock.now.bind(clock);
    jest.spyOn(clock, 'now').mockImplementation(() => now() + ms);
  };
  const deactivate = (id: number, by = token) =>
    api.put(`/api/users/${id}`, { token: by, body: { active: false } });
  const login = (username: string, password = DEFAULT_PASSWORD) =>
    api.post('/api/auth/login', { body: { username, password } });

  describe('password login', () => {
    it('refuses an inactive user with the right password as 401 Invalid username or password, audited', async () => {
      expect((await deactivate(jane.id)).status).toBe(200);
      const res = await login('JANE');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID_CREDENTIALS);
      const failures = await auditEvents(app.dataSource, 'auth.login_failed');
      expect(failures).toEqual([
        expect.objectContaining({
          target_type: 'user',
          target_ids: [String(jane.id)],
          summary: { username: 'JANE' },
        }),
      ]);
    });

    it('counts those refusals in the throttle: the 11th attempt within 60 s is a 429', async () => {
      await deactivate(jane.id);
      for (let attempt = 0; attempt < 10; attempt++) expect((await login('jane')).status).toBe(401);
      const blocked = await login('jane');
      expect(blocked.status).toBe(429);
      expect(blocked.body.message).toBe('Too many requests, try again later');
    });

    it('lets the user sign in again once reactivated', async () => {
      await deactivate(jane.id);
      expect((await login('jane')).status).toBe(401);
      const back = await api.put(`/api/users/${jane.id}`, { token, body: { active: true } });
      expect(back.body.data.active).toBe(true);
      expect((await login('jane')).status).toBe(200);
    });
  });

  describe('tokens', () => {
    it("refuses the user's token at once when deactivated through this service", async () => {
      const own = tokenFor(jane);
      expect((await api.get('/api/auth/me', { token: own })).status).toBe(200);
      await deactivate(jane.id);
      for (const path of ['/api/auth/me', '/api/modules']) {
        const res = await api.get(path, { token: own });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(INVALID_TOKEN);
      }
    });

    it('refuses it within the 5 s user-check bound when deactivated elsewhere (another replica)', async () => {
      const own = tokenFor(jane);
      expect((await api.get('/api/auth/me', { token: own })).status).toBe(200);
      await app.dataSource.query(`UPDATE users SET active = false WHERE id = $1`, [jane.id]);
      advanceClock(app.config.userCacheTtlMs);
      const res = await api.get('/api/auth/me', { token: own });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID_TOKEN);
    });

    it("refuses an inactive admin's token on admin routes too", async () => {
      const other = await makeUser(app.dataSource, { admin: true });
      await deactivate(other.id);
      const res = await api.get('/api/users', { token: tokenFor(other) });
      expect(res).toMatchObject({ status: 401, body: INVALID_TOKEN });
    });
  });

  describe('deactivating', () => {
    it('refuses an admin deactivating themself with 403, changing nothing', async () => {
      const res = await deactivate(admin.id);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        success: false,
        data: null,
        message: 'You cannot deactivate your own account',
      });
      const [row] = await app.dataSource.query(`SELECT active FROM users WHERE id = $1`, [admin.id]);
      expect(row.active).toBe(true);
      expect(await auditEvents(app.dataSource, 'user.update')).toEqual([]);
      // Setting themself active is no change of rights: allowed.
      expect((await api.put(`/api/users/${admin.id}`, { token, body: { active: true } })).status).toBe(200);
    });

    it('audits the change as user.update {active: {from, to}} and writes a user.updated event', async () => {
      const res = await deactivate(jane.id);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: jane.id, active: false });
      const [audit] = await auditEvents(app.dataSource, 'user.update');
      expect(audit).toMatchObject({
        actor_id: admin.id,
        target_type: 'user',
        target_ids: [String(jane.id)],
        summary: { active: { from: true, to: false } },
      });
      const events = await app.dataSource.query(`SELECT type, data FROM change_events ORDER BY id`);
      expect(events).toEqual([{ type: 'user.updated', data: res.body.data }]);
    });

    it('keeps memberships: member lists show the user with active false, eligible leaves them out', async () => {
      const module = await makeModule(app.dataSource);
      await assignRole(app.dataSource, jane.id, module.id, ModuleRole.Student);
      const bob = await makeUser(app.dataSource, { username: 'bob' });
      const carl = await makeUser(app.dataSource, { username: 'carl' });
      await deactivate(jane.id);
      await deactivate(carl.id);

      const students = await api.get(`/api/modules/${module.id}/students`, { token });
      expect(students.body.data.users.map((u: any) => [u.username, u.active])).toEqual([['jane', false]]);
      const single = await api.get(`/api/modules/${module.id}`, { token });
      expect(single.body.data.students.map((u: any) => [u.username, u.active])).toEqual([['jane', false]]);
      const modules = await api.get(`/api/users/${jane.id}/modules`, { token });
      expect(modules.body.data.map((m: any) => m.id)).toEqual([module.id]);

      const eligible = await api.get(`/api/modules/${module.id}/personnel/eligible`, { token });
      expect(eligible.body.data.users.map((u: any) => u.username)).toEqual(['bob', 'root']);
      expect(eligible.body.data.total).toBe(2);
      expect(bob.id).toBeGreaterThan(0);
    });
  });
});

describe('inactive users and single sign-on (docs/api.md §11, §14)', () => {
  let idp: TestIdp;
  let app: TestApp;
  let api: Client;

  beforeAll(async () => {
    idp = await TestIdp.start();
    app = await startTestApp({
      oidc: {
        issuer: idp.issuer,
        audience: TEST_AUDIENCE,
        usernameClaim: 'preferred_username',
        createUsers: true,
        clientId: undefined,
        scopes: ['openid', 'profile', 'email'],
        maxTokenAgeS: 86_400,
        refetchCooldownMs: 30_000,
      },
    });
    api = client(app.url);
  });
  afterAll(async () => {
    await app?.close();
    await idp?.stop();
  });
  beforeEach(() => app.reset());

  it("refuses an inactive user's IdP token and never creates the user again", async () => {
    const admin = await makeUser(app.dataSource, { admin: true });
    const leaver = await makeUser(app.dataSource, {
      username: 'jane.doe@uni.edu',
      email: 'jane.doe@uni.edu',
    });
    const idpToken = await idp.accessToken({
      preferred_username: 'jane.doe@uni.edu',
      email: 'jane.doe@uni.edu',
    });
    expect((await api.get('/api/auth/me', { token: idpToken })).body.data.id).toBe(leaver.id);

    const res = await api.put(`/api/users/${leaver.id}`, { token: tokenFor(admin), body: { active: false } });
    expect(res.status).toBe(200);
    expect(await api.get('/api/auth/me', { token: idpToken })).toMatchObject({
      status: 401,
      body: INVALID_TOKEN,
    });
    // A fresh token for the same person, even with another case of the name: refused, nobody created.
    const fresh = await idp.accessToken({
      preferred_username: 'Jane.Doe@uni.edu',
      email: 'jane.doe@uni.edu',
    });
    expect(await api.get('/api/auth/me', { token: fresh })).toMatchObject({
      status: 401,
      body: INVALID_TOKEN,
    });
    const users = await app.dataSource.query(
      `SELECT id, active FROM users WHERE lower(username) = 'jane.doe@uni.edu'`,
    );
    expect(users).toEqual([{ id: leaver.id, active: false }]);
    const created = await app.dataSource.query(`SELECT 1 FROM audit_events WHERE action = 'user.create'`);
    expect(created).toEqual([]);
  });
});
