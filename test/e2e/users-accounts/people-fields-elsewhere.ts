// Part of test/users-accounts.e2e-spec.ts: where external_id shows, the list's filters on people fields, and the CSV.
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { USER_ACCOUNT_FIELDS, USER_SUMMARY_FIELDS } from '../../../src/users/user.shape.js';
import { auditEvents, csvLines, postCsv } from '../../support/csv.js';
import { assignRole, makeModule, makeUser, tokenFor } from '../../support/factories.js';
import { PASSWORD, type PeopleFieldsContext } from './context.js';

export function peopleFieldsElsewhereTests(ctx: PeopleFieldsContext): void {
  const { app, api, create, jane, given } = ctx;

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
      const res = await api.get(`/api/users?${query}`, { token: given.token });
      expect(res.status).toBe(200);
      return res.body.data.users.map((u: any) => u.username);
    };

    it('filters by active', async () => {
      expect(await names('active=false')).toEqual(['bob']);
      expect(await names('active=true')).toEqual(['root', 'jane.doe@uni.edu']);
    });

    it('answers 400 for an active that is not true or false', async () => {
      const res = await api.get('/api/users?active=yes', { token: given.token });
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
        headers: { authorization: `Bearer ${given.token}` },
      });
      const lines = csvLines(await res.text());
      expect(lines[0]).toBe(
        'id,username,email,admin,created_at,updated_at,given_name,family_name,display_name,external_id,active',
      );
      expect(lines[1]).toMatch(
        /^\d+,jane\.doe@uni\.edu,jane\.doe@uni\.edu,false,[^,]+,[^,]+,Jane,Doe,Jane Doe,0f8fad5b-d9cb-469f-a165-70867728950e,true$/,
      );
      expect(lines[2]).toMatch(
        new RegExp(`^${given.admin.id},root,root@example.edu,true,[^,]+,[^,]+,,,,,true$`),
      );
    });

    it('imports the new columns: create with them, update what differs, unchanged on a second run', async () => {
      await makeUser(app.dataSource, { username: 'ada', email: 'ada@example.edu' });
      const file =
        'username,email,given_name,family_name,display_name,external_id,active\r\n' +
        'ada,ada@example.edu,Ada,Lovelace,,A-1,false\r\n' +
        'new.person@uni.edu,new.person@uni.edu,New,Person,New Person,N-1,\r\n';
      const dry = await postCsv(api, '/api/users/import?dry_run=true', given.token, file);
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
      const applied = await postCsv(api, '/api/users/import', given.token, file);
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

      const again = await postCsv(api, '/api/users/import', given.token, file);
      expect(again.body.data).toMatchObject({ created: 0, updated: 0, unchanged: 2 });
      // A file without the §14 columns changes none of them.
      const plain = await postCsv(
        api,
        '/api/users/import',
        given.token,
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
        given.token,
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
      const res = await postCsv(api, '/api/users/import', given.token, file);
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
}
