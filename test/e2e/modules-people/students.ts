// Part of test/modules-people.e2e-spec.ts: a module's students.
import { type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import {
  failure,
  ids,
  INVALID_SORT,
  memberJson,
  ModuleRole,
  type ModuleRow,
  PERMISSION_DENIED,
  roleOf,
  staffedModule,
  tokenFor,
  type UserRow,
} from '../../support/modules-fixtures.js';

export function studentTests({ app, api }: UsedTestApp): void {
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
  const asStudent = (user: UserRow) => memberJson(user, ModuleRole.Student);

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
}
