// The people of a module: personnel, students, and the roster's CSV import and export.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import http from 'node:http';
import pg from 'pg';
import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import { testDatabaseUrl, useTestApp } from './support/app.js';
import { auditEvents, csvLines, postCsv } from './support/csv.js';
import {
  assignRole,
  makeModule,
  makeUser,
  type ModuleRow,
  tokenFor,
  type UserRow,
} from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';
import {
  failure,
  ids,
  INVALID_ROLE,
  INVALID_SORT,
  OPEN_MEMBERSHIP,
  PERMISSION_DENIED,
  roleOf,
  staffedModule,
  userJson,
} from './support/modules-fixtures.js';

const NOT_ASSIGNED = 'Some users are not assigned with this role';

describe('module personnel', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let adminToken: string;
  let module: ModuleRow;
  /** One user per role in `module`, plus one without a role. */
  let lecturer: UserRow;
  let assistant: UserRow;
  let tutor: UserRow;
  let student: UserRow;
  let outsider: UserRow;

  beforeEach(async () => {
    ({ admin, token: adminToken } = await freshAdmin(app, { username: 'root' }));
    ({
      module,
      lecturer,
      assistant,
      tutor,
      outsider,
      students: [student],
    } = await staffedModule(app.dataSource, {
      lecturer: 'lena',
      assistant: 'Adam',
      tutor: 'tom',
      outsider: 'otto',
      students: ['sara'],
    }));
  });

  const path = (suffix = '', id: number | string = module.id) => `/api/modules/${id}/personnel${suffix}`;
  const member = (user: UserRow, role: ModuleRole) => ({ ...userJson(user), role, ...OPEN_MEMBERSHIP });

  /** Who may list personnel and eligible users. */
  const viewers = () =>
    [
      ['admin', adminToken, 200],
      ['Lecturer', tokenFor(lecturer), 200],
      ['AssistantLecturer', tokenFor(assistant), 200],
      ['Tutor', tokenFor(tutor), 403],
      ['Student', tokenFor(student), 403],
      ['user without a role', tokenFor(outsider), 403],
    ] as const;

  describe('GET …/personnel', () => {
    const get = (query = '', token = adminToken) => api.get(path(query), { token });

    it('lists every role holder with their role, ordered by username', async () => {
      const res = await get();
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          users: [
            member(assistant, ModuleRole.AssistantLecturer),
            member(lecturer, ModuleRole.Lecturer),
            member(student, ModuleRole.Student),
            member(tutor, ModuleRole.Tutor),
          ],
          page: 1,
          per_page: 20,
          total: 4,
        },
        message: 'Personnel retrieved successfully',
      });
    });

    it('is open to admins and staff of the module only', async () => {
      for (const [who, token, status] of viewers()) {
        const res = await get('', token);
        expect([who, res.status]).toEqual([who, status]);
        if (status === 403) expect(res.body).toEqual(failure(PERMISSION_DENIED));
      }
      // Staff of another module are no staff here.
      const other = await makeModule(app.dataSource);
      await assignRole(app.dataSource, outsider.id, other.id, ModuleRole.Lecturer);
      expect((await get('', tokenFor(outsider))).status).toBe(403);
    });

    it('answers 404 for an unknown module to everyone, and 400 for a bad id', async () => {
      for (const [, token] of viewers()) {
        expect((await api.get(path('', 999999), { token })).body).toEqual(failure('Module not found'));
      }
      expect((await api.get(path('', 'x'), { token: adminToken })).body).toEqual(
        failure('module_id must be a positive integer'),
      );
      expect((await api.get(path())).body).toEqual(failure('Authentication required'));
    });

    it('filters by role in any accepted spelling', async () => {
      for (const role of [
        'AssistantLecturer',
        'assistantlecturer',
        'assistant_lecturer',
        'ASSISTANT_LECTURER',
      ]) {
        const res = await get(`?role=${role}`);
        expect(res.body.data).toEqual({
          users: [member(assistant, ModuleRole.AssistantLecturer)],
          page: 1,
          per_page: 20,
          total: 1,
        });
      }
      expect(ids((await get('?role=student')).body.data.users)).toEqual(ids([student]));
    });

    it('rejects an unknown role', async () => {
      for (const role of ['Professor', '', 'assistant-lecturer', 'Lecturers']) {
        expect((await get(`?role=${role}`)).body).toEqual(failure(INVALID_ROLE));
      }
      expect((await get('?role=x&page=y')).body).toEqual(failure(`page must be an integer; ${INVALID_ROLE}`));
    });

    it('matches query against username or email, literally and case-insensitively', async () => {
      const snake = await makeUser(app.dataSource, { username: 'snake_case', email: 'snake@example.edu' });
      const plain = await makeUser(app.dataSource, {
        username: 'snakeXcase',
        email: 'Plain@Uni.EDU'.toLowerCase(),
      });
      await assignRole(app.dataSource, snake.id, module.id, ModuleRole.Student);
      await assignRole(app.dataSource, plain.id, module.id, ModuleRole.Student);
      expect(ids((await get('?query=_')).body.data.users)).toEqual(ids([snake]));
      expect(ids((await get('?query=SNAKE')).body.data.users)).toEqual(ids([snake, plain]));
      expect(ids((await get('?query=uni.edu')).body.data.users)).toEqual(ids([plain]));
      expect(ids((await get('?query=%25')).body.data.users)).toEqual([]);
      expect(ids((await get('?query=snake&role=tutor')).body.data.users)).toEqual([]);
    });

    it('sorts by username, email or created_at, ties by id', async () => {
      await app.dataSource.query(
        `UPDATE users SET email = CASE username WHEN 'lena' THEN 'a@x.edu' WHEN 'tom' THEN 'b@x.edu'
           WHEN 'sara' THEN 'c@x.edu' ELSE 'd@x.edu' END,
         created_at = CASE username WHEN 'sara' THEN '2020-01-01Z'::timestamptz ELSE '2021-01-01Z'::timestamptz END
         WHERE username IN ('lena', 'Adam', 'tom', 'sara')`,
      );
      const order = async (sort: string) => ids((await get(`?sort=${sort}`)).body.data.users);
      expect(await order('username')).toEqual(ids([assistant, lecturer, student, tutor]));
      expect(await order('-username')).toEqual(ids([tutor, student, lecturer, assistant]));
      expect(await order('email')).toEqual(ids([lecturer, tutor, student, assistant]));
      expect(await order('-email')).toEqual(ids([assistant, student, tutor, lecturer]));
      expect(await order('created_at')).toEqual(ids([student, lecturer, assistant, tutor]));
      expect(await order('-created_at,-username')).toEqual(ids([tutor, lecturer, assistant, student]));
      for (const bad of ['role', 'id', 'admin', '--email'])
        expect((await get(`?sort=${bad}`)).body).toEqual(failure(INVALID_SORT));
    });

    it('pages with clamping and reports the total', async () => {
      expect((await get('?per_page=2&page=2')).body.data).toEqual({
        users: [member(student, ModuleRole.Student), member(tutor, ModuleRole.Tutor)],
        page: 2,
        per_page: 2,
        total: 4,
      });
      const clamped = (await get('?per_page=0&page=-1')).body.data;
      expect([clamped.page, clamped.per_page, clamped.users.length, clamped.total]).toEqual([1, 1, 1, 4]);
      expect((await get('?page=9')).body.data).toEqual({ users: [], page: 9, per_page: 20, total: 4 });
      expect((await get('?per_page=1.0')).body).toEqual(failure('per_page must be an integer'));
    });
  });

  describe('GET …/personnel/eligible', () => {
    const get = (query = '', token = adminToken) => api.get(path(`/eligible${query}`), { token });

    it('lists users holding no role in the module as User summaries, ordered by username', async () => {
      const other = await makeModule(app.dataSource);
      const elsewhere = await makeUser(app.dataSource, { username: 'Bea' });
      await assignRole(app.dataSource, elsewhere.id, other.id, ModuleRole.Lecturer);
      const res = await get();
      expect(res.body).toEqual({
        success: true,
        data: { users: [elsewhere, outsider, admin].map(userJson), page: 1, per_page: 20, total: 3 },
        message: 'Eligible users retrieved successfully',
      });
    });

    it('is open to admins and staff of the module only', async () => {
      for (const [who, token, status] of viewers())
        expect([who, (await get('', token)).status]).toEqual([who, status]);
      expect((await api.get(path('/eligible', 999999), { token: tokenFor(tutor) })).status).toBe(404);
    });

    it('takes query, sort and paging, and ignores role', async () => {
      expect(ids((await get('?query=OTT')).body.data.users)).toEqual(ids([outsider]));
      expect(ids((await get('?sort=-username')).body.data.users)).toEqual(ids([admin, outsider]));
      expect((await get('?per_page=1&page=2&role=bogus')).body.data).toEqual({
        users: [userJson(admin)],
        page: 2,
        per_page: 1,
        total: 2,
      });
      expect((await get('?sort=role')).body).toEqual(failure(INVALID_SORT));
    });
  });

  describe('POST …/personnel', () => {
    const post = (body: unknown, token = adminToken, id: number | string = module.id) =>
      api.post(path('', id), { token, body });

    it('assigns the role to every named user, replacing another role in this module', async () => {
      const other = await makeModule(app.dataSource);
      await assignRole(app.dataSource, outsider.id, other.id, ModuleRole.Student);
      const res = await post({ user_ids: [outsider.id, student.id, outsider.id], role: 'tutor' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: { assigned: 2 },
        message: 'Users assigned successfully',
      });
      expect(await roleOf(app.dataSource, outsider.id, module.id)).toBe('Tutor');
      expect(await roleOf(app.dataSource, student.id, module.id)).toBe('Tutor');
      expect(await roleOf(app.dataSource, outsider.id, other.id)).toBe('Student');
      const again = await post({ user_ids: [tutor.id], role: 'Tutor' });
      expect(again.body.data).toEqual({ assigned: 1 });
      expect((await api.get(path('?role=Tutor'), { token: adminToken })).body.data.total).toBe(3);
    });

    it('accepts every spelling of a role and stores the canonical one', async () => {
      for (const [spelling, canonical] of [
        ['assistant_lecturer', 'AssistantLecturer'],
        ['ASSISTANT_LECTURER', 'AssistantLecturer'],
        ['LECTURER', 'Lecturer'],
        ['student', 'Student'],
      ]) {
        expect((await post({ user_ids: [outsider.id], role: spelling })).status).toBe(200);
        expect(await roleOf(app.dataSource, outsider.id, module.id)).toBe(canonical);
      }
    });

    it('validates the body, joining messages in field order', async () => {
      const cases: [unknown, string][] = [
        [{ user_ids: [], role: 'Tutor' }, 'At least one user ID is required'],
        [{ role: 'Tutor' }, 'At least one user ID is required'],
        [
          { user_ids: Array.from({ length: 1001 }, (_, i) => i + 1), role: 'Tutor' },
          'At most 1000 user IDs are allowed per request',
        ],
        [{ user_ids: ['1'], role: 'Tutor' }, 'user_ids must be an array of 64-bit integers'],
        [{ user_ids: 1, role: 'Tutor' }, 'user_ids must be an array of 64-bit integers'],
        [{ user_ids: [1] }, INVALID_ROLE],
        [{ user_ids: [1], role: 'Dean' }, INVALID_ROLE],
        [{ user_ids: [1], role: 3 }, INVALID_ROLE],
        [{}, `At least one user ID is required; ${INVALID_ROLE}`],
        [{ user_ids: [1], role: 'Tutor', extra: 1 }, 'property extra should not exist'],
      ];
      for (const [body, message] of cases) expect((await post(body)).body).toEqual(failure(message));
      // Validation (step 3) comes before the module's existence (step 4).
      expect((await post({ user_ids: [] }, adminToken, 999999)).status).toBe(400);
      expect(await roleOf(app.dataSource, 1, module.id)).toBeNull();
    });

    it('answers 404 for an unknown module before access', async () => {
      const res = await post({ user_ids: [outsider.id], role: 'Tutor' }, tokenFor(student), 999999);
      expect([res.status, res.body]).toEqual([404, failure('Module not found')]);
    });

    it('refuses callers who are neither admin nor a Lecturer of the module', async () => {
      for (const user of [assistant, tutor, student, outsider]) {
        const res = await post({ user_ids: [outsider.id], role: 'Student' }, tokenFor(user));
        expect(res.body).toEqual(failure(PERMISSION_DENIED));
      }
      expect(await roleOf(app.dataSource, outsider.id, module.id)).toBeNull();
    });

    it('lets a Lecturer assign every role but Lecturer', async () => {
      const token = tokenFor(lecturer);
      for (const role of ['AssistantLecturer', 'Tutor', 'Student']) {
        expect((await post({ user_ids: [outsider.id], role }, token)).status).toBe(200);
        expect(await roleOf(app.dataSource, outsider.id, module.id)).toBe(role);
      }
      const res = await post({ user_ids: [outsider.id], role: 'lecturer' }, token);
      expect([res.status, res.body]).toEqual([403, failure(PERMISSION_DENIED)]);
      expect(await roleOf(app.dataSource, outsider.id, module.id)).toBe('Student');
    });

    it("refuses a Lecturer changing an existing Lecturer's role, their own included", async () => {
      const colleague = await makeUser(app.dataSource);
      await assignRole(app.dataSource, colleague.id, module.id, ModuleRole.Lecturer);
      for (const user_ids of [[colleague.id], [outsider.id, colleague.id], [lecturer.id]]) {
        const res = await post({ user_ids, role: 'Tutor' }, tokenFor(lecturer));
        expect(res.body).toEqual(failure(PERMISSION_DENIED));
      }
      expect(await roleOf(app.dataSource, colleague.id, module.id)).toBe('Lecturer');
      expect(await roleOf(app.dataSource, outsider.id, module.id)).toBeNull();
      // An admin may.
      expect((await post({ user_ids: [colleague.id], role: 'Tutor' })).status).toBe(200);
    });

    it('names the first unknown user in request order and changes nothing', async () => {
      const res = await post({ user_ids: [outsider.id, 888888, 777777], role: 'Tutor' });
      expect([res.status, res.body]).toEqual([404, failure('User with ID 888888 does not exist')]);
      expect(await roleOf(app.dataSource, outsider.id, module.id)).toBeNull();
      expect((await post({ user_ids: [0], role: 'Tutor' })).body).toEqual(
        failure('User with ID 0 does not exist'),
      );
      expect((await post({ user_ids: [-5], role: 'Tutor' })).body).toEqual(
        failure('User with ID -5 does not exist'),
      );
    });

    it("answers the unknown user's 404 before the 403 for changing a Lecturer", async () => {
      const res = await post({ user_ids: [lecturer.id, 888888], role: 'Tutor' }, tokenFor(lecturer));
      expect(res.body).toEqual(failure('User with ID 888888 does not exist'));
    });

    it('refuses a Lecturer naming the Lecturer role before looking up users', async () => {
      const res = await post({ user_ids: [888888], role: 'Lecturer' }, tokenFor(lecturer));
      expect(res.body).toEqual(failure(PERMISSION_DENIED));
    });
  });

  describe('DELETE …/personnel', () => {
    const del = (body: unknown, token = adminToken, id: number | string = module.id) =>
      api.delete(path('', id), { token, body });

    it('removes the role from every named user', async () => {
      const second = await makeUser(app.dataSource);
      await assignRole(app.dataSource, second.id, module.id, ModuleRole.Tutor);
      const res = await del({ user_ids: [tutor.id, second.id, tutor.id], role: 'TUTOR' });
      expect(res.body).toEqual({
        success: true,
        data: { removed: 2 },
        message: 'Users removed successfully',
      });
      expect(await roleOf(app.dataSource, tutor.id, module.id)).toBeNull();
      expect(await roleOf(app.dataSource, second.id, module.id)).toBeNull();
      expect(await roleOf(app.dataSource, student.id, module.id)).toBe('Student');
    });

    it('answers 409 and removes nothing when a user does not hold the role', async () => {
      for (const user_ids of [
        [tutor.id, student.id],
        [tutor.id, outsider.id],
      ]) {
        const res = await del({ user_ids, role: 'Tutor' });
        expect([res.status, res.body]).toEqual([409, failure(NOT_ASSIGNED)]);
      }
      expect(await roleOf(app.dataSource, tutor.id, module.id)).toBe('Tutor');
    });

    it('answers 404 for an unknown user before 409', async () => {
      const res = await del({ user_ids: [student.id, 888888], role: 'Tutor' });
      expect([res.status, res.body]).toEqual([404, failure('User with ID 888888 does not exist')]);
    });

    it('follows the same access rules as assignment', async () => {
      for (const user of [assistant, tutor, student, outsider]) {
        expect((await del({ user_ids: [student.id], role: 'Student' }, tokenFor(user))).body).toEqual(
          failure(PERMISSION_DENIED),
        );
      }
      expect((await del({ user_ids: [lecturer.id], role: 'Lecturer' }, tokenFor(lecturer))).body).toEqual(
        failure(PERMISSION_DENIED),
      );
      expect(await roleOf(app.dataSource, lecturer.id, module.id)).toBe('Lecturer');
      expect((await del({ user_ids: [student.id], role: 'student' }, tokenFor(lecturer))).body.data).toEqual({
        removed: 1,
      });
      expect((await del({ user_ids: [lecturer.id], role: 'Lecturer' })).body.data).toEqual({ removed: 1 });
      expect((await del({ user_ids: [tutor.id], role: 'Tutor' }, adminToken, 999999)).body).toEqual(
        failure('Module not found'),
      );
    });

    it('validates the body first', async () => {
      expect((await del({ user_ids: [], role: 'Tutor' }, tokenFor(outsider), 999999)).body).toEqual(
        failure('At least one user ID is required'),
      );
      expect((await api.delete(path(), { body: { user_ids: [1], role: 'Tutor' } })).status).toBe(401);
    });
  });
  describe('a Lecturer racing an admin', () => {
    /** Resolves once another backend waits for a lock (the Lecturer's write, behind the open transaction). */
    async function lockWaiterAppears(): Promise<void> {
      for (;;) {
        const [{ waiting }] = await app.dataSource.query<{ waiting: number }[]>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if (waiting > 0) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }

    it.each([
      [
        'personnel POST',
        (token: string, userId: number) =>
          api.post(path(), { token, body: { user_ids: [userId], role: 'Tutor' } }),
      ],
      [
        'roster import',
        (token: string, userId: number, username: string) =>
          api.post(`/api/modules/${module.id}/roster/import`, {
            token,
            headers: { 'content-type': 'text/csv' },
            body: `user,role\n${username},Tutor\n`,
          }),
      ],
    ])(
      '%s never replaces a Lecturer role an admin committed after the checks (403, the Lecturer stays)',
      async (_route, send) => {
        const admin2 = new pg.Client({ connectionString: testDatabaseUrl() });
        await admin2.connect();
        try {
          await admin2.query('BEGIN');
          await admin2.query(
            `INSERT INTO user_module_roles (user_id, module_id, role) VALUES ($1, $2, 'Lecturer')`,
            [outsider.id, module.id],
          );
          const answer = send(tokenFor(lecturer), outsider.id, outsider.username);
          await lockWaiterAppears();
          await admin2.query('COMMIT');
          const res = await answer;
          expect(res.status).toBe(403);
          expect(res.body).toEqual(failure(PERMISSION_DENIED));
          expect(await roleOf(app.dataSource, outsider.id, module.id)).toBe('Lecturer');
        } finally {
          await admin2.end();
        }
      },
    );
  });
});

describe('module students', () => {
  const { app, api } = useTestApp();
  let adminToken: string;
  let module: ModuleRow;
  let lecturer: UserRow;
  let assistant: UserRow;
  let tutor: UserRow;
  let students: UserRow[];
  let outsider: UserRow;
  beforeEach(async () => {
    ({ token: adminToken } = await freshAdmin(app));
    ({ module, lecturer, assistant, tutor, outsider, students } = await staffedModule(app.dataSource, {
      outsider: 'outsider',
      students: ['zoe', 'Amir', 'max_power'],
    }));
  });

  const path = (suffix = '', id: number | string = module.id) => `/api/modules/${id}/students${suffix}`;
  const asStudent = (user: UserRow) => ({ ...userJson(user), role: 'Student', ...OPEN_MEMBERSHIP });

  describe('GET …/students', () => {
    const get = (query = '', token = adminToken, id: number | string = module.id) =>
      api.get(path(query, id), { token });

    it('lists the students only, ordered by username, with role Student', async () => {
      const res = await get();
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          users: [students[1], students[2], students[0]].map(asStudent),
          page: 1,
          per_page: 20,
          total: 3,
        },
        message: 'Students retrieved successfully',
      });
    });

    it('is open to admins and the teaching staff of the module', async () => {
      for (const user of [lecturer, assistant, tutor])
        expect((await get('', tokenFor(user))).status).toBe(200);
      for (const user of [students[0], outsider]) {
        const res = await get('', tokenFor(user));
        expect([res.status, res.body]).toEqual([403, failure(PERMISSION_DENIED)]);
      }
      expect((await get('', tokenFor(outsider), 999999)).body).toEqual(failure('Module not found'));
      expect((await get('', tokenFor(outsider), 'nope')).body).toEqual(
        failure('module_id must be a positive integer'),
      );
      expect((await api.get(path())).status).toBe(401);
    });

    it('ignores a role parameter, valid or not', async () => {
      expect((await get('?role=Tutor')).body.data.total).toBe(3);
      expect((await get('?role=bogus')).body.data.total).toBe(3);
    });

    it('takes query, sort and paging as personnel does', async () => {
      expect(ids((await get('?query=_')).body.data.users)).toEqual(ids([students[2]]));
      expect(ids((await get('?sort=-username')).body.data.users)).toEqual(
        ids([students[0], students[2], students[1]]),
      );
      expect((await get('?per_page=1&page=3')).body.data).toEqual({
        users: [asStudent(students[0])],
        page: 3,
        per_page: 1,
        total: 3,
      });
      expect((await get('?sort=year')).body).toEqual(failure(INVALID_SORT));
      expect((await get('?page=one')).body).toEqual(failure('page must be an integer'));
    });
  });

  describe('POST …/students', () => {
    const post = (body: unknown, token = adminToken, id: number | string = module.id) =>
      api.post(path('', id), { token, body });

    it('enrols users as students, replacing another role, counting each user once', async () => {
      const res = await post({ user_ids: [outsider.id, tutor.id, outsider.id] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: { enrolled: 2 },
        message: 'Students enrolled successfully',
      });
      expect(await roleOf(app.dataSource, outsider.id, module.id)).toBe('Student');
      expect(await roleOf(app.dataSource, tutor.id, module.id)).toBe('Student');
    });

    it('is open to admins and Lecturers of the module', async () => {
      expect((await post({ user_ids: [outsider.id] }, tokenFor(lecturer))).body.data).toEqual({
        enrolled: 1,
      });
      for (const user of [assistant, tutor, students[0]]) {
        expect((await post({ user_ids: [outsider.id] }, tokenFor(user))).body).toEqual(
          failure(PERMISSION_DENIED),
        );
      }
      expect((await post({ user_ids: [outsider.id] }, tokenFor(tutor), 999999)).body).toEqual(
        failure('Module not found'),
      );
    });

    it("refuses a Lecturer enrolling an existing Lecturer, after unknown users' 404", async () => {
      expect((await post({ user_ids: [lecturer.id] }, tokenFor(lecturer))).body).toEqual(
        failure(PERMISSION_DENIED),
      );
      expect((await post({ user_ids: [lecturer.id, 777777] }, tokenFor(lecturer))).body).toEqual(
        failure('User with ID 777777 does not exist'),
      );
      expect(await roleOf(app.dataSource, lecturer.id, module.id)).toBe('Lecturer');
    });

    it('validates the body: user_ids only', async () => {
      expect((await post({ user_ids: [] })).body).toEqual(failure('At least one user ID is required'));
      expect((await post({})).body).toEqual(failure('At least one user ID is required'));
      expect((await post({ user_ids: [outsider.id], role: 'Tutor' })).body).toEqual(
        failure('property role should not exist'),
      );
      expect((await post({ user_ids: [1.5] })).body).toEqual(
        failure('user_ids must be an array of 64-bit integers'),
      );
    });
  });

  describe('DELETE …/students', () => {
    const del = (body: unknown, token = adminToken) => api.delete(path(), { token, body });

    it('removes students', async () => {
      const res = await del({ user_ids: [students[0].id, students[1].id] });
      expect(res.body).toEqual({
        success: true,
        data: { removed: 2 },
        message: 'Students removed successfully',
      });
      expect(await roleOf(app.dataSource, students[0].id, module.id)).toBeNull();
      expect(await roleOf(app.dataSource, students[2].id, module.id)).toBe('Student');
    });

    it('answers 409 and removes nothing when a user is not a student', async () => {
      const res = await del({ user_ids: [students[0].id, tutor.id] });
      expect([res.status, res.body]).toEqual([409, failure('Some users are not assigned with this role')]);
      expect(await roleOf(app.dataSource, students[0].id, module.id)).toBe('Student');
    });

    it('is open to admins and Lecturers of the module', async () => {
      for (const user of [assistant, tutor, students[1]]) {
        expect((await del({ user_ids: [students[0].id] }, tokenFor(user))).body).toEqual(
          failure(PERMISSION_DENIED),
        );
      }
      expect((await del({ user_ids: [students[0].id] }, tokenFor(lecturer))).body.data).toEqual({
        removed: 1,
      });
      expect((await del({ user_ids: [999999] }, tokenFor(lecturer))).body).toEqual(
        failure('User with ID 999999 does not exist'),
      );
    });
  });
});

describe('Roster import and export', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let token: string;
  let mod: ModuleRow;
  let ann: UserRow;
  let bob: UserRow;
  let cid: UserRow;

  beforeEach(async () => {
    ({ admin, token } = await freshAdmin(app, { username: 'root' }));
    mod = await makeModule(app.dataSource);
    ann = await makeUser(app.dataSource, { username: 'ann', email: 'ann@example.edu' });
    bob = await makeUser(app.dataSource, { username: 'bob', email: 'bob@example.edu' });
    cid = await makeUser(app.dataSource, { username: 'cid', email: 'cid@example.edu' });
  });

  const importRoster = (text: string, query = '', as = token) =>
    postCsv(api, `/api/modules/${mod.id}/roster/import${query}`, as, text);
  const roster = async () =>
    (
      await app.dataSource.query<{ username: string; role: string }[]>(
        `SELECT u.username, r.role FROM user_module_roles r JOIN users u ON u.id = r.user_id
         WHERE r.module_id = $1 ORDER BY u.username`,
        [mod.id],
      )
    ).map((row) => `${row.username}:${row.role}`);

  it('assigns, changes and leaves roles by username or email, with one audit event', async () => {
    await assignRole(app.dataSource, bob.id, mod.id, ModuleRole.Student);
    await assignRole(app.dataSource, cid.id, mod.id, ModuleRole.Tutor);
    const res = await importRoster('user,role\nANN,student\nbob@example.edu,assistant_lecturer\ncid,TUTOR\n');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      message: 'Roster imported',
      data: {
        rows: [
          { line: 2, action: 'assign', user: 'ANN', user_id: Number(ann.id), role: 'Student' },
          {
            line: 3,
            action: 'change',
            user: 'bob@example.edu',
            user_id: Number(bob.id),
            role: 'AssistantLecturer',
          },
          { line: 4, action: 'unchanged', user: 'cid', user_id: Number(cid.id), role: 'Tutor' },
        ],
        assigned: 1,
        changed: 1,
        unchanged: 1,
        removed: [],
        errors: 0,
        exceeds_limit: false,
        dry_run: false,
      },
    });
    expect(await roster()).toEqual(['ann:Student', 'bob:AssistantLecturer', 'cid:Tutor']);
    expect(await auditEvents(app.dataSource, 'roster.import')).toEqual([
      expect.objectContaining({
        actor_id: Number(admin.id),
        target_type: 'module',
        target_ids: [String(mod.id)],
        summary: { mode: 'add', assigned: 1, changed: 1, unchanged: 1, removed: 0 },
      }),
    ]);

    const again = await importRoster(
      'user,role\nANN,student\nbob@example.edu,assistant_lecturer\ncid,TUTOR\n',
    );
    expect(again.body.data).toMatchObject({ assigned: 0, changed: 0, unchanged: 3 });
    expect(await auditEvents(app.dataSource, 'roster.import')).toHaveLength(1);
  });

  it('answers a dry run with 200 "Roster checked" and changes nothing', async () => {
    const res = await importRoster('user,role\nann,Student\n', '?dry_run=true');
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Roster checked');
    expect(res.body.data).toMatchObject({ assigned: 1, dry_run: true });
    expect(await roster()).toEqual([]);
    expect(await auditEvents(app.dataSource)).toEqual([]);
  });

  it('answers 422 with every row when any row is wrong, and changes nothing', async () => {
    const res = await importRoster(
      'user,role\nann,Student\nnobody,Student\nbob,Boss\nANN@example.edu,Tutor\n',
    );
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('Import has errors; nothing was changed');
    expect(res.body.data.rows).toEqual([
      { line: 2, action: 'assign', user: 'ann', user_id: Number(ann.id), role: 'Student' },
      {
        line: 3,
        action: 'error',
        user: 'nobody',
        user_id: null,
        role: 'Student',
        errors: ['Unknown user: nobody'],
      },
      {
        line: 4,
        action: 'error',
        user: 'bob',
        user_id: Number(bob.id),
        role: 'Boss',
        errors: [INVALID_ROLE],
      },
      {
        line: 5,
        action: 'error',
        user: 'ANN@example.edu',
        user_id: Number(ann.id),
        role: 'Tutor',
        errors: ['Duplicate user in file'],
      },
    ]);
    expect(res.body.data.errors).toBe(3);
    expect(await roster()).toEqual([]);
    expect(await auditEvents(app.dataSource)).toEqual([]);
  });

  it('lets a Lecturer import other roles but not name or change Lecturers', async () => {
    const lecturer = await makeUser(app.dataSource, { username: 'lect' });
    await assignRole(app.dataSource, lecturer.id, mod.id, ModuleRole.Lecturer);
    await assignRole(app.dataSource, bob.id, mod.id, ModuleRole.Lecturer);
    const as = tokenFor(lecturer);
    const wrong = await importRoster('user,role\nann,Lecturer\nbob,Student\ncid,Tutor\n', '', as);
    expect(wrong.status).toBe(422);
    expect(wrong.body.data.rows.map((row: { errors?: string[] }) => row.errors)).toEqual([
      [PERMISSION_DENIED],
      [PERMISSION_DENIED],
      undefined,
    ]);
    const ok = await importRoster('user,role\nann,Student\ncid,Tutor\n', '', as);
    expect(ok.status).toBe(200);
    expect(await roster()).toEqual(['ann:Student', 'bob:Lecturer', 'cid:Tutor', 'lect:Lecturer']);
  });

  it('refuses callers who may not change personnel (403) and unknown modules (404)', async () => {
    const assistant = await makeUser(app.dataSource);
    await assignRole(app.dataSource, assistant.id, mod.id, ModuleRole.AssistantLecturer);
    expect(await importRoster('user,role\nann,Student\n', '', tokenFor(assistant))).toMatchObject({
      status: 403,
      body: failure(PERMISSION_DENIED),
    });
    expect(
      await postCsv(api, `/api/modules/999999999/roster/import`, token, 'user,role\nann,Student\n'),
    ).toMatchObject({
      status: 404,
      body: failure('Module not found'),
    });
    expect(await importRoster('user\nann\n')).toMatchObject({
      status: 400,
      body: failure('Missing column: role'),
    });
    expect(await importRoster('user,role\nann,Student\n', '?mode=replace')).toMatchObject({
      status: 400,
      body: failure('mode must be add or sync'),
    });
    expect(await importRoster('user,role\nann,Student\n', '?mode=sync&max_removals=-1')).toMatchObject({
      status: 400,
      body: failure('max_removals must be an integer of at least 0'),
    });
    expect(await auditEvents(app.dataSource)).toEqual([]);
  });

  /**
   * Starts an import whose body never ends (chunked, a first part sent) and resolves with the answer: an answer
   * that comes proves the service decided without reading the file.
   */
  const answerWithoutBody = (path: string, as: string) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const url = new URL(app.url + path);
      const request = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'text/csv', authorization: `Bearer ${as}` },
      });
      request.on('response', (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          request.destroy();
          resolve({ status: response.statusCode!, body: JSON.parse(text) });
        });
      });
      request.on('error', reject);
      // Without a decision before the body, no answer ever comes: fail instead of waiting for Jest's timeout.
      request.setTimeout(10_000, () => reject(new Error('no answer before the body ended')));
      request.write(`user,role\n${'ann,Student\n'.repeat(1000)}`);
    });

  it('checks the module (404) and the role of the caller (403) before reading the file', async () => {
    const outsider = await makeUser(app.dataSource);
    const tutor = await makeUser(app.dataSource);
    await assignRole(app.dataSource, tutor.id, mod.id, ModuleRole.Tutor);
    expect(await answerWithoutBody(`/api/modules/${mod.id}/roster/import`, tokenFor(outsider))).toEqual({
      status: 403,
      body: failure(PERMISSION_DENIED),
    });
    expect(await answerWithoutBody(`/api/modules/${mod.id}/roster/import`, tokenFor(tutor))).toEqual({
      status: 403,
      body: failure(PERMISSION_DENIED),
    });
    expect(await answerWithoutBody('/api/modules/999999999/roster/import', token)).toEqual({
      status: 404,
      body: failure('Module not found'),
    });
    // A file the caller could not import anyway is not looked at: no 400 for its shape.
    expect(await importRoster('user\nann\n', '', tokenFor(outsider))).toMatchObject({
      status: 403,
      body: failure(PERMISSION_DENIED),
    });
    expect(await roster()).toEqual([`${tutor.username}:Tutor`]);
  });

  describe('mode=sync', () => {
    let students: UserRow[];

    beforeEach(async () => {
      students = [];
      for (let i = 0; i < 20; i++) {
        const student = await makeUser(app.dataSource, { username: `s${String(i).padStart(2, '0')}` });
        await assignRole(app.dataSource, student.id, mod.id, ModuleRole.Student);
        students.push(student);
      }
    });

    const keepAllBut = (n: number) =>
      `user,role\n${students
        .slice(n)
        .map((student) => `${student.username},Student`)
        .join('\n')}\n`;

    it('removes members not in the file, within the default limit of 10 %', async () => {
      const res = await importRoster(keepAllBut(2), '?mode=sync');
      expect(res.status).toBe(200);
      expect(res.body.data.removed).toEqual([
        { user_id: Number(students[0].id), username: 's00', role: 'Student' },
        { user_id: Number(students[1].id), username: 's01', role: 'Student' },
      ]);
      expect(await roster()).toHaveLength(18);
      expect((await auditEvents(app.dataSource, 'roster.import'))[0].summary).toMatchObject({
        mode: 'sync',
        removed: 2,
      });
    });

    it('refuses with 409 past the limit unless it is raised; a dry run reports exceeds_limit', async () => {
      const res = await importRoster(keepAllBut(3), '?mode=sync');
      expect(res).toMatchObject({
        status: 409,
        body: failure('Sync would remove 3 members; the limit is 2'),
      });
      expect(await roster()).toHaveLength(20);
      const dry = await importRoster(keepAllBut(3), '?mode=sync&dry_run=true');
      expect(dry.status).toBe(200);
      expect(dry.body.data).toMatchObject({ exceeds_limit: true, dry_run: true });
      expect(dry.body.data.removed).toHaveLength(3);
      expect(await auditEvents(app.dataSource)).toEqual([]);
      const raised = await importRoster(keepAllBut(3), '?mode=sync&max_removals=3');
      expect(raised.status).toBe(200);
      expect(await roster()).toHaveLength(17);
    });

    it('never has a Lecturer remove Lecturers', async () => {
      const lecturer = await makeUser(app.dataSource, { username: 'lect' });
      const other = await makeUser(app.dataSource, { username: 'other-lect' });
      await assignRole(app.dataSource, lecturer.id, mod.id, ModuleRole.Lecturer);
      await assignRole(app.dataSource, other.id, mod.id, ModuleRole.Lecturer);
      const res = await importRoster(keepAllBut(1), '?mode=sync', tokenFor(lecturer));
      expect(res.status).toBe(200);
      expect(res.body.data.removed).toEqual([
        { user_id: Number(students[0].id), username: 's00', role: 'Student' },
      ]);
      expect(await roster()).toEqual(expect.arrayContaining(['lect:Lecturer', 'other-lect:Lecturer']));
    });
  });

  describe('GET /api/modules/{id}/roster.csv', () => {
    beforeEach(async () => {
      await assignRole(app.dataSource, ann.id, mod.id, ModuleRole.Student);
      await assignRole(app.dataSource, bob.id, mod.id, ModuleRole.Tutor);
      const tricky = await makeUser(app.dataSource, { username: '-cmd', email: '=evil,"x"@example.edu' });
      await assignRole(app.dataSource, tricky.id, mod.id, ModuleRole.Student);
    });

    it('streams the members as CSV with the list filters and sort, guarding formula cells', async () => {
      const res = await fetch(`${app.url}/api/modules/${mod.id}/roster.csv?sort=-username`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(res.headers.get('content-disposition')).toBe(
        `attachment; filename="module-${mod.id}-roster.csv"`,
      );
      const text = await res.text();
      expect(text.endsWith('\r\n')).toBe(true);
      const lines = csvLines(text);
      expect(lines[0]).toBe('user_id,username,email,role,status,starts_at,ends_at,effective_status');
      expect(lines.slice(1).map((line) => line.split(',')[1])).toEqual(['bob', 'ann', "'-cmd"]);
      expect(lines[3]).toMatch(/^\d+,'-cmd,"'=evil,""x""@example.edu",Student,active,,,active$/);

      // A spreadsheet whose list separator is ; splits no cell, and full-width formula starts are guarded.
      const wide = await makeUser(app.dataSource, { username: 'wide', email: '－1;=2@example.edu' });
      await assignRole(app.dataSource, wide.id, mod.id, ModuleRole.Student);
      const guarded = await fetch(`${app.url}/api/modules/${mod.id}/roster.csv?query=wide`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(csvLines(await guarded.text())[1]).toBe(
        `${wide.id},wide,"'－1;=2@example.edu",Student,active,,,active`,
      );

      const students = await fetch(`${app.url}/api/modules/${mod.id}/roster.csv?role=student&query=an`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(csvLines(await students.text())).toEqual([
        'user_id,username,email,role,status,starts_at,ends_at,effective_status',
        `${ann.id},ann,ann@example.edu,Student,active,,,active`,
      ]);
    });

    it('answers JSON errors before the first byte: 400, 403, 404', async () => {
      expect(await api.get(`/api/modules/${mod.id}/roster.csv?sort=nope`, { token })).toMatchObject({
        status: 400,
        body: failure('Invalid field used for sorting'),
      });
      expect(await api.get(`/api/modules/${mod.id}/roster.csv`, { token: tokenFor(bob) })).toMatchObject({
        status: 403,
        body: failure(PERMISSION_DENIED),
      });
      expect(await api.get(`/api/modules/999999999/roster.csv`, { token })).toMatchObject({
        status: 404,
        body: failure('Module not found'),
      });
      expect(await api.get(`/api/modules/${mod.id}/roster.csv`)).toMatchObject({ status: 401 });
    });
  });
});
