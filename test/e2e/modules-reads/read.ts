// Part of test/modules-reads.e2e-spec.ts: one module, and the modules of the caller.
import { type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import {
  assignRole,
  failure,
  makeModule,
  makeUser,
  moduleJson,
  ModuleRole,
  type ModuleRow,
  PERMISSION_DENIED,
  tokenFor,
  userJson,
  type UserRow,
} from '../../support/modules-fixtures.js';

export function moduleReadTests({ app, api }: UsedTestApp): void {
  let admin: UserRow;
  let adminToken: string;
  beforeEach(async () => {
    ({ admin, token: adminToken } = await freshAdmin(app));
  });

  describe('GET /api/modules/{module_id}', () => {
    let module: ModuleRow;

    beforeEach(async () => {
      module = await makeModule(app.dataSource, { code: 'SEC301', year: 2026, description: 'Security' });
    });

    const read = (id: number | string, token = adminToken) => api.get(`/api/modules/${id}`, { token });

    it('requires a token', async () => {
      expect((await api.get(`/api/modules/${module.id}`)).body).toEqual(failure('Authentication required'));
      expect((await api.get('/api/modules/abc')).status).toBe(401);
    });

    it('gives an admin the module with four empty personnel lists', async () => {
      const res = await read(module.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: { ...moduleJson(module), lecturers: [], assistant_lecturers: [], tutors: [], students: [] },
        message: 'Module retrieved successfully',
      });
    });

    it('lists each role holder under their role, each list ordered by username', async () => {
      const make = (username: string) => makeUser(app.dataSource, { username });
      const carol = await make('carol');
      const alice = await make('alice');
      const bob = await make('Bob');
      const dave = await make('dave');
      const erin = await make('Erin');
      const frank = await make('frank');
      const grace = await make('grace');
      await makeUser(app.dataSource, { username: 'outsider' });
      for (const [user, role] of [
        [carol, ModuleRole.Tutor],
        [alice, ModuleRole.Tutor],
        [bob, ModuleRole.Tutor],
        [dave, ModuleRole.Lecturer],
        [erin, ModuleRole.AssistantLecturer],
        [frank, ModuleRole.Student],
        [grace, ModuleRole.Student],
      ] as const) {
        await assignRole(app.dataSource, user.id, module.id, role);
      }
      const other = await makeModule(app.dataSource);
      await assignRole(app.dataSource, bob.id, other.id, ModuleRole.Lecturer);

      const res = await read(module.id);
      expect(res.body.data).toEqual({
        ...moduleJson(module),
        lecturers: [userJson(dave)],
        assistant_lecturers: [userJson(erin)],
        tutors: [alice, bob, carol].map(userJson),
        students: [frank, grace].map(userJson),
      });
      expect(JSON.stringify(res.body)).not.toMatch(/password|hash/i);
    });

    it('shows a role holder with an avatar with its URL', async () => {
      const user = await makeUser(app.dataSource);
      await app.dataSource.query(
        `UPDATE users SET avatar_key = 'avatars/x', avatar_content_type = 'image/png' WHERE id = $1`,
        [user.id],
      );
      await assignRole(app.dataSource, user.id, module.id, ModuleRole.Student);
      const res = await read(module.id);
      expect(res.body.data.students).toEqual([
        { ...userJson(user), avatar_url: `/api/users/${user.id}/avatar` },
      ]);
    });

    // The personnel lists are JSON text built by PostgreSQL: the bytes must be what JSON.stringify writes.
    it('writes the body byte for byte as JSON.stringify would, whatever the characters', async () => {
      const odd = [
        'quote"back\\slash@example.edu',
        'tab\tline\nfeed\u0001ctl@example.edu',
        'accent-\u00e9-\u2028-\u{1f600}@example.edu',
      ];
      const people: UserRow[] = [];
      for (const [i, email] of odd.entries()) {
        const user = await makeUser(app.dataSource, { username: `Odd${i}`, email });
        await assignRole(
          app.dataSource,
          user.id,
          module.id,
          i === 0 ? ModuleRole.Lecturer : ModuleRole.Student,
        );
        people.push(user);
      }
      await app.dataSource.query(`UPDATE users SET avatar_key = '' WHERE id = $1`, [people[1].id]);
      await app.dataSource.query(`UPDATE users SET avatar_key = 'avatars/x' WHERE id = $1`, [people[2].id]);
      const response = await fetch(`${app.url}/api/modules/${module.id}`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await response.text()).toBe(
        JSON.stringify({
          success: true,
          data: {
            ...moduleJson(module),
            lecturers: [userJson(people[0])],
            assistant_lecturers: [],
            tutors: [],
            students: [
              userJson(people[1]),
              { ...userJson(people[2]), avatar_url: `/api/users/${people[2].id}/avatar` },
            ],
          },
          message: 'Module retrieved successfully',
        }),
      );
    });

    it.each(Object.values(ModuleRole))('lets a %s of the module read it', async (role) => {
      const user = await makeUser(app.dataSource);
      await assignRole(app.dataSource, user.id, module.id, role);
      const res = await read(module.id, tokenFor(user));
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Module retrieved successfully');
      expect(res.body.data.id).toBe(Number(module.id));
    });

    it('writes a large body (sent as one buffer) byte for byte as JSON.stringify would, multi-byte text included', async () => {
      // Over 16 KiB of JSON text (LARGE_JSON_TEXT): the envelope is written into a Buffer from its parts.
      const students: UserRow[] = [];
      for (let i = 0; i < 120; i += 1) {
        const username = `Gro\u00df-\u{1f600}-${String(i).padStart(3, '0')}-${module.id}`;
        const user = await makeUser(app.dataSource, {
          username,
          email: `gross${i}-${module.id}@example.edu`,
        });
        await assignRole(app.dataSource, user.id, module.id, ModuleRole.Student);
        students.push(user);
      }
      const response = await fetch(`${app.url}/api/modules/${module.id}`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      const body = await response.text();
      const expected = JSON.stringify({
        success: true,
        data: {
          ...moduleJson(module),
          lecturers: [],
          assistant_lecturers: [],
          tutors: [],
          students: students.map(userJson),
        },
        message: 'Module retrieved successfully',
      });
      expect(expected.length).toBeGreaterThan(16_384);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(expected));
      expect(body).toBe(expected);
    });

    it('refuses a user without a role in the module', async () => {
      const user = await makeUser(app.dataSource);
      const other = await makeModule(app.dataSource);
      await assignRole(app.dataSource, user.id, other.id, ModuleRole.Lecturer);
      const res = await read(module.id, tokenFor(user));
      expect(res.status).toBe(403);
      expect(res.body).toEqual(failure(PERMISSION_DENIED));
    });

    it('refuses a token claiming admin for a user without the admin flag', async () => {
      const user = await makeUser(app.dataSource);
      expect((await read(module.id, tokenFor({ id: user.id, admin: true }))).status).toBe(403);
    });

    it('answers 404 for an unknown module to every caller, before access', async () => {
      const user = await makeUser(app.dataSource);
      for (const token of [adminToken, tokenFor(user)]) {
        const res = await read(Number(module.id) + 1000, token);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(failure('Module not found'));
      }
      expect((await read('9223372036854775807')).body).toEqual(failure('Module not found'));
    });

    it('rejects a module_id that is not a positive 64-bit integer', async () => {
      const user = await makeUser(app.dataSource);
      for (const id of [
        'abc',
        '0',
        '-1',
        '1.5',
        '1e3',
        '%2B1',
        '9223372036854775808',
        '99999999999999999999',
      ]) {
        const res = await read(id, tokenFor(user));
        expect([id, res.status, res.body]).toEqual([
          id,
          400,
          failure('module_id must be a positive integer'),
        ]);
      }
    });
  });

  describe('GET /api/modules/me', () => {
    const mine = (token: string) => api.get('/api/modules/me', { token });

    it('requires a token', async () => {
      expect((await api.get('/api/modules/me')).body).toEqual(failure('Authentication required'));
    });

    it('answers four empty groups for a user without roles', async () => {
      const user = await makeUser(app.dataSource);
      await makeModule(app.dataSource);
      const res = await mine(tokenFor(user));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: { as_student: [], as_tutor: [], as_lecturer: [], as_assistant_lecturer: [] },
        message: 'My module details retrieved successfully',
      });
    });

    it('groups the modules by role, each ordered by year descending then code', async () => {
      const user = await makeUser(app.dataSource);
      const other = await makeUser(app.dataSource);
      const m = async (code: string, year: number, role: ModuleRole) => {
        const row = await makeModule(app.dataSource, { code, year });
        await assignRole(app.dataSource, user.id, row.id, role);
        await assignRole(app.dataSource, other.id, row.id, ModuleRole.Student);
        return row;
      };
      const s1 = await m('ZZZ100', 2024, ModuleRole.Student);
      const s2 = await m('BBB100', 2026, ModuleRole.Student);
      const s3 = await m('AAA100', 2024, ModuleRole.Student);
      const s4 = await m('CCC100', 2026, ModuleRole.Student);
      const t1 = await m('TTT100', 2025, ModuleRole.Tutor);
      const l1 = await m('LLL100', 2023, ModuleRole.Lecturer);
      const l2 = await m('LLL200', 2027, ModuleRole.Lecturer);
      const a1 = await m('ASS100', 2025, ModuleRole.AssistantLecturer);
      await makeModule(app.dataSource, { code: 'NOT100', year: 2030 });

      const res = await mine(tokenFor(user));
      expect(res.body.data).toEqual({
        as_student: [s2, s4, s3, s1].map(moduleJson),
        as_tutor: [moduleJson(t1)],
        as_lecturer: [l2, l1].map(moduleJson),
        as_assistant_lecturer: [moduleJson(a1)],
      });
    });

    it('shows an admin only the modules where they hold a role', async () => {
      await makeModule(app.dataSource);
      expect((await mine(adminToken)).body.data).toEqual({
        as_student: [],
        as_tutor: [],
        as_lecturer: [],
        as_assistant_lecturer: [],
      });
      const module = await makeModule(app.dataSource);
      await assignRole(app.dataSource, admin.id, module.id, ModuleRole.Tutor);
      expect((await mine(adminToken)).body.data.as_tutor).toEqual([moduleJson(module)]);
    });
  });
}
