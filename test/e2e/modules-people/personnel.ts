// Part of test/modules-people.e2e-spec.ts: a module's personnel.
import pg from 'pg';
import { testDatabaseUrl, type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import {
  assignRole,
  failure,
  ids,
  INVALID_ROLE,
  INVALID_SORT,
  makeModule,
  makeUser,
  memberJson,
  ModuleRole,
  type ModuleRow,
  PERMISSION_DENIED,
  roleOf,
  staffedModule,
  tokenFor,
  userJson,
  type UserRow,
} from '../../support/modules-fixtures.js';

const NOT_ASSIGNED = 'Some users are not assigned with this role';

export function personnelTests({ app, api }: UsedTestApp): void {
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
            memberJson(assistant, ModuleRole.AssistantLecturer),
            memberJson(lecturer, ModuleRole.Lecturer),
            memberJson(student, ModuleRole.Student),
            memberJson(tutor, ModuleRole.Tutor),
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
          users: [memberJson(assistant, ModuleRole.AssistantLecturer)],
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
        users: [memberJson(student, ModuleRole.Student), memberJson(tutor, ModuleRole.Tutor)],
        page: 2,
        per_page: 2,
        total: 4,
      });
      const clamped = (await get('?per_page=0&page=-1')).body.data;
      expect([clamped.page, clamped.per_page, clamped.users.length, clamped.total]).toEqual([1, 1, 1, 4]);
      expect((await get('?page=9')).body.data).toEqual({ users: [], page: 9, per_page: 20, total: 4 });
      expect((await get('?per_page=1.0')).body).toEqual(failure('per_page must be an integer'));
    });

    it("follows a user's rename in its order, however the username was changed", async () => {
      const order = async (query = '') => ids((await get(query)).body.data.users);
      const rename = async (user: UserRow, username: string) =>
        expect(
          (await api.put(`/api/users/${user.id}`, { token: adminToken, body: { username } })).status,
        ).toBe(200);
      await rename(tutor, 'aaron');
      expect(await order()).toEqual(ids([tutor, assistant, lecturer, student]));
      // Not through the service: the database keeps the order by itself.
      await app.dataSource.query(`UPDATE users SET username = 'Zed' WHERE id = $1`, [assistant.id]);
      expect(await order()).toEqual(ids([tutor, lecturer, student, assistant]));
      expect(await order('?sort=-username')).toEqual(ids([assistant, student, lecturer, tutor]));
      expect(await order('?role=assistant_lecturer&query=ZED')).toEqual(ids([assistant]));
      // A change of case alone keeps the place (usernames sort case-insensitively) and shows the new spelling.
      await rename(tutor, 'AARON');
      expect((await get('?per_page=1')).body.data.users).toEqual([
        { ...memberJson(tutor, ModuleRole.Tutor), username: 'AARON', updated_at: expect.any(String) },
      ]);
    });

    it('keeps its totals through every write of the role rows', async () => {
      const totals = async () => [
        (await get()).body.data.total,
        (await get('?role=student')).body.data.total,
        (await get('?role=tutor')).body.data.total,
      ];
      expect(await totals()).toEqual([4, 1, 1]);
      const extra = await makeUser(app.dataSource);
      await api.post(path(), {
        token: adminToken,
        body: { user_ids: [outsider.id, extra.id], role: 'Student' },
      });
      expect(await totals()).toEqual([6, 3, 1]);
      // A role changed in place moves one member from one count to the other.
      await api.post(path(), { token: adminToken, body: { user_ids: [student.id], role: 'Tutor' } });
      expect(await totals()).toEqual([6, 2, 2]);
      await api.delete(path(), { token: adminToken, body: { user_ids: [tutor.id], role: 'Tutor' } });
      expect(await totals()).toEqual([5, 2, 1]);
      expect((await api.delete(`/api/users/${extra.id}`, { token: adminToken })).status).toBe(200);
      expect(await totals()).toEqual([4, 1, 1]);
      // A status filter counts; it agrees.
      expect((await get('?status=active')).body.data.total).toBe(4);
      const [{ n }] = await app.dataSource.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM user_module_roles WHERE module_id = $1`,
        [module.id],
      );
      expect(n).toBe(4);
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
}
