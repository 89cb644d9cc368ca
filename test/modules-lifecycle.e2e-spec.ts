// Membership lifecycle: status and dates of role rows, and the time-based events on two replicas.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import { MembershipSweep } from '../src/course-modules/membership/membership-sweep.js';
import { startTestApp, type TestApp, useTestApp } from './support/app.js';
import { auditEvents, csvLines, postCsv } from './support/csv.js';
import { makeModule, makeUser, type ModuleRow, tokenFor, type UserRow } from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';
import { request } from './support/http.js';
import { failure, PERMISSION_DENIED } from './support/modules-fixtures.js';
import { waitFor } from './support/wait-for.js';

/** The membership lifecycle (docs/api.md §15): status, dates, effective status, rights, routes and CSV. */

const DAY = 86_400_000;
const past = (days = 1) => new Date(Date.now() - days * DAY).toISOString();
const future = (days = 1) => new Date(Date.now() + days * DAY).toISOString();

interface Lifecycle {
  status?: 'active' | 'inactive' | 'completed';
  starts_at?: string | null;
  ends_at?: string | null;
}

describe('membership lifecycle', () => {
  // The time sweep is tested on two replicas below ("time-based membership events on two replicas"); here it stays out of the way.
  const { app, api } = useTestApp({ membershipSweepIntervalMs: 50_000 });
  let adminToken: string;
  let module: ModuleRow;

  beforeEach(async () => {
    ({ token: adminToken } = await freshAdmin(app));
    module = await makeModule(app.dataSource);
  });

  /** A role row written straight into the database, with its lifecycle. */
  async function member(user: UserRow, role: string, lifecycle: Lifecycle = {}, moduleId = module.id) {
    await app.dataSource.query(
      `INSERT INTO user_module_roles (user_id, module_id, role, status, starts_at, ends_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        user.id,
        moduleId,
        role,
        lifecycle.status ?? 'active',
        lifecycle.starts_at ?? null,
        lifecycle.ends_at ?? null,
      ],
    );
  }

  /** The stored membership of `user` in the module (dates as RFC 3339 text), or undefined. */
  async function stored(user: UserRow, moduleId = module.id) {
    const [row] = await app.dataSource.query(
      `SELECT role, status::text AS status,
              to_char(starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS starts_at,
              to_char(ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ends_at
       FROM user_module_roles WHERE user_id = $1 AND module_id = $2`,
      [user.id, moduleId],
    );
    return row as
      { role: string; status: string; starts_at: string | null; ends_at: string | null } | undefined;
  }

  /** The `module.members_changed` events written so far, oldest first (their data). */
  async function membersEvents() {
    const rows = await app.dataSource.query<{ data: unknown }[]>(
      `SELECT data FROM change_events WHERE type = 'module.members_changed' ORDER BY id`,
    );
    return rows.map((row) => row.data);
  }

  /** One user per effective status, each a Student of the module. */
  async function studentsOfEachStatus() {
    const active = await makeUser(app.dataSource, { username: 'a-active' });
    const upcoming = await makeUser(app.dataSource, { username: 'b-upcoming' });
    const ended = await makeUser(app.dataSource, { username: 'c-ended' });
    const completed = await makeUser(app.dataSource, { username: 'd-completed' });
    const inactive = await makeUser(app.dataSource, { username: 'e-inactive' });
    const window = { starts_at: past(10), ends_at: future(10) };
    await member(active, 'Student', window);
    await member(upcoming, 'Student', { starts_at: future(2) });
    await member(ended, 'Student', { starts_at: past(10), ends_at: past(1) });
    await member(completed, 'Student', { status: 'completed' });
    await member(inactive, 'Student', { status: 'inactive', ends_at: future(3) });
    return { active, upcoming, ended, completed, inactive, window };
  }

  describe('effective status in the lists', () => {
    it('shows status, dates and the effective status of every membership, and filters by effective status', async () => {
      const s = await studentsOfEachStatus();
      const list = await api.get(`/api/modules/${module.id}/students`, { token: adminToken });
      expect(list.status).toBe(200);
      const fields = list.body.data.users.map((user: any) => ({
        username: user.username,
        status: user.status,
        starts_at: user.starts_at,
        ends_at: user.ends_at,
        effective_status: user.effective_status,
      }));
      const at = (iso: string) => new Date(iso).toISOString();
      expect(fields).toEqual([
        {
          username: 'a-active',
          status: 'active',
          starts_at: at(s.window.starts_at),
          ends_at: at(s.window.ends_at),
          effective_status: 'active',
        },
        {
          username: 'b-upcoming',
          status: 'active',
          starts_at: expect.any(String),
          ends_at: null,
          effective_status: 'upcoming',
        },
        {
          username: 'c-ended',
          status: 'active',
          starts_at: expect.any(String),
          ends_at: expect.any(String),
          effective_status: 'completed',
        },
        {
          username: 'd-completed',
          status: 'completed',
          starts_at: null,
          ends_at: null,
          effective_status: 'completed',
        },
        {
          username: 'e-inactive',
          status: 'inactive',
          starts_at: null,
          ends_at: expect.any(String),
          effective_status: 'inactive',
        },
      ]);
      const only = async (status: string, path = 'students') => {
        const answer = await api.get(`/api/modules/${module.id}/${path}?status=${status}`, {
          token: adminToken,
        });
        expect(answer.status).toBe(200);
        return {
          names: answer.body.data.users.map((user: any) => user.username),
          total: answer.body.data.total,
        };
      };
      expect(await only('completed')).toEqual({ names: ['c-ended', 'd-completed'], total: 2 });
      expect(await only('upcoming', 'personnel')).toEqual({ names: ['b-upcoming'], total: 1 });
      expect(await only('active')).toEqual({ names: ['a-active'], total: 1 });
      expect(await only('inactive')).toEqual({ names: ['e-inactive'], total: 1 });
      expect((await only('all')).total).toBe(5);
      for (const path of ['students', 'personnel', 'roster.csv']) {
        expect(
          await api.get(`/api/modules/${module.id}/${path}?status=gone`, { token: adminToken }),
        ).toMatchObject({
          status: 400,
          body: failure('status must be one of active, upcoming, completed, inactive, all'),
        });
      }
    });

    it('exports the membership columns in roster.csv, filtered like the list', async () => {
      const s = await studentsOfEachStatus();
      const answer = await api.get(`/api/modules/${module.id}/roster.csv?status=active`, {
        token: adminToken,
      });
      expect(answer.status).toBe(200);
      const lines = csvLines(answer.body);
      expect(lines).toEqual([
        'user_id,username,email,role,status,starts_at,ends_at,effective_status',
        `${s.active.id},a-active,a-active@example.edu,Student,active,${new Date(s.window.starts_at).toISOString()},${new Date(s.window.ends_at).toISOString()},active`,
      ]);
      const all = csvLines(
        (await api.get(`/api/modules/${module.id}/roster.csv`, { token: adminToken })).body,
      );
      expect(all.slice(1).map((line) => line.split(',').at(-1))).toEqual([
        'active',
        'upcoming',
        'completed',
        'completed',
        'inactive',
      ]);
    });

    it('fills the single read arrays with the effective active members only', async () => {
      const s = await studentsOfEachStatus();
      const read = await api.get(`/api/modules/${module.id}`, { token: adminToken });
      expect(read.status).toBe(200);
      expect(read.body.data.students.map((user: any) => user.username)).toEqual([s.active.username]);
    });
  });

  describe('rights come from effective active memberships only', () => {
    /** A Lecturer of the module with the given lifecycle, and their token. */
    async function lecturer(lifecycle: Lifecycle) {
      const user = await makeUser(app.dataSource);
      await member(user, 'Lecturer', lifecycle);
      return tokenFor(user);
    }
    const codeOf = (answer: { status: number; body: any }) =>
      answer.status === 403
        ? JSON.stringify(answer.body) === JSON.stringify(failure(PERMISSION_DENIED)) && 403
        : answer.status;

    it('lets a completed member read the module and nothing else; upcoming and inactive ones are non-members', async () => {
      const target = await makeUser(app.dataSource);
      const callers = {
        active: await lecturer({ starts_at: past(3), ends_at: future(3) }),
        ended: await lecturer({ ends_at: past(1) }),
        completed: await lecturer({ status: 'completed' }),
        upcoming: await lecturer({ starts_at: future(1) }),
        inactive: await lecturer({ status: 'inactive' }),
      };
      const results: Record<string, Record<string, number | false>> = {};
      for (const [name, token] of Object.entries(callers)) {
        const id = module.id;
        const list = await api.get('/api/modules', { token });
        results[name] = {
          read: codeOf(await api.get(`/api/modules/${id}`, { token })),
          personnel: codeOf(await api.get(`/api/modules/${id}/personnel`, { token })),
          eligible: codeOf(await api.get(`/api/modules/${id}/personnel/eligible`, { token })),
          students: codeOf(await api.get(`/api/modules/${id}/students`, { token })),
          roster: codeOf(await api.get(`/api/modules/${id}/roster.csv`, { token })),
          enrol: codeOf(
            await api.post(`/api/modules/${id}/students`, { token, body: { user_ids: [target.id] } }),
          ),
          import: codeOf(
            await postCsv(
              api,
              `/api/modules/${id}/roster/import?dry_run=true`,
              token,
              `user,role\n${target.username},Student\n`,
            ),
          ),
          listed: list.body.data.total,
        };
      }
      const member = {
        read: 200,
        personnel: 200,
        eligible: 200,
        students: 200,
        roster: 200,
        enrol: 200,
        import: 200,
        listed: 1,
      };
      const reader = {
        read: 200,
        personnel: 403,
        eligible: 403,
        students: 403,
        roster: 403,
        enrol: 403,
        import: 403,
        listed: 1,
      };
      const outsider = { ...reader, read: 403, listed: 0 };
      expect(results).toEqual({
        active: member,
        ended: reader,
        completed: reader,
        upcoming: outsider,
        inactive: outsider,
      });
    });

    it("lists a member's modules in /me by effective status: active by default, completed or upcoming on request", async () => {
      const user = await makeUser(app.dataSource);
      const token = tokenFor(user);
      const current = module;
      const finished = await makeModule(app.dataSource);
      const next = await makeModule(app.dataSource);
      const dropped = await makeModule(app.dataSource);
      await member(user, 'Student', { ends_at: future(5) }, current.id);
      await member(user, 'Tutor', { ends_at: past(1) }, finished.id);
      await member(user, 'Lecturer', { starts_at: future(1) }, next.id);
      await member(user, 'Student', { status: 'inactive' }, dropped.id);
      const groups = async (query: string) => {
        const answer = await api.get(`/api/modules/me${query}`, { token });
        expect(answer.status).toBe(200);
        const data = answer.body.data;
        return Object.fromEntries(
          Object.entries(data).map(([group, modules]) => [
            group,
            (modules as { id: number }[]).map((m) => m.id),
          ]),
        );
      };
      const none = { as_student: [], as_tutor: [], as_lecturer: [], as_assistant_lecturer: [] };
      expect(await groups('')).toEqual({ ...none, as_student: [Number(current.id)] });
      expect(await groups('?status=active')).toEqual({ ...none, as_student: [Number(current.id)] });
      expect(await groups('?status=completed')).toEqual({ ...none, as_tutor: [Number(finished.id)] });
      expect(await groups('?status=upcoming')).toEqual({ ...none, as_lecturer: [Number(next.id)] });
      for (const bad of ['inactive', 'all', 'ACTIVE']) {
        expect(await api.get(`/api/modules/me?status=${bad}`, { token })).toMatchObject({
          status: 400,
          body: failure('status must be one of active, completed, upcoming'),
        });
      }
      // The module list: active and completed memberships, with exact totals.
      const list = await api.get('/api/modules', { token });
      expect(list.body.data.modules.map((m: { id: number }) => m.id)).toEqual(
        [current.id, finished.id].map(Number).sort((a, b) => a - b),
      );
      expect(list.body.data.total).toBe(2);
    });
  });

  describe('personnel and student POST with membership fields', () => {
    it('sets the fields on new memberships, keeps stored values for omitted fields, and reports status changes', async () => {
      const ann = await makeUser(app.dataSource);
      const bob = await makeUser(app.dataSource);
      const starts = future(1);
      const ends = future(30);
      const path = `/api/modules/${module.id}/students`;
      expect(
        await api.post(path, {
          token: adminToken,
          body: { user_ids: [ann.id], starts_at: starts, ends_at: ends },
        }),
      ).toMatchObject({ status: 200, body: { data: { enrolled: 1 } } });
      expect(await stored(ann)).toEqual({
        role: 'Student',
        status: 'active',
        starts_at: starts,
        ends_at: ends,
      });
      // A new membership without fields gets the defaults; a stored one keeps its dates when they are omitted.
      expect(
        await api.post(path, {
          token: adminToken,
          body: { user_ids: [ann.id, bob.id], status: 'completed' },
        }),
      ).toMatchObject({ status: 200, body: { data: { enrolled: 2 } } });
      expect(await stored(ann)).toEqual({
        role: 'Student',
        status: 'completed',
        starts_at: starts,
        ends_at: ends,
      });
      expect(await stored(bob)).toEqual({
        role: 'Student',
        status: 'completed',
        starts_at: null,
        ends_at: null,
      });
      // null opens a date; a role change through personnel keeps the stored status.
      expect(
        await api.post(`/api/modules/${module.id}/personnel`, {
          token: adminToken,
          body: { user_ids: [ann.id], role: 'Tutor', starts_at: null },
        }),
      ).toMatchObject({ status: 200 });
      expect(await stored(ann)).toEqual({
        role: 'Tutor',
        status: 'completed',
        starts_at: null,
        ends_at: ends,
      });
      const events = await membersEvents();
      expect(events).toEqual([
        {
          module_id: Number(module.id),
          added: [{ user_id: Number(ann.id), role: 'Student' }],
          removed: [],
          changed: [],
        },
        {
          module_id: Number(module.id),
          added: [{ user_id: Number(bob.id), role: 'Student' }],
          removed: [],
          changed: [],
          status_changed: [{ user_id: Number(ann.id), from: 'active', to: 'completed' }],
        },
        {
          module_id: Number(module.id),
          added: [],
          removed: [],
          changed: [{ user_id: Number(ann.id), from: 'Student', to: 'Tutor' }],
          status_changed: [],
        },
      ]);
    });

    it('refuses bad fields with their messages, and dates that would end before they start, changing nothing', async () => {
      const ann = await makeUser(app.dataSource);
      await member(ann, 'Student', { starts_at: '2030-01-01T00:00:00.000Z' });
      const path = `/api/modules/${module.id}/students`;
      const post = (body: unknown) => api.post(path, { token: adminToken, body });
      const cases: [unknown, string][] = [
        [{ user_ids: [ann.id], status: 'gone' }, 'status must be one of active, inactive, completed'],
        [{ user_ids: [ann.id], status: null }, 'status must be one of active, inactive, completed'],
        [{ user_ids: [ann.id], starts_at: '2030-01-01' }, 'starts_at must be an RFC 3339 timestamp'],
        [
          { user_ids: [ann.id], starts_at: '2030-02-30T00:00:00Z' },
          'starts_at must be an RFC 3339 timestamp',
        ],
        [{ user_ids: [ann.id], ends_at: 1_900_000_000 }, 'ends_at must be an RFC 3339 timestamp'],
        [
          { user_ids: [ann.id], starts_at: '2030-01-02T00:00:00Z', ends_at: '2030-01-01T00:00:00+01:00' },
          'ends_at must be after starts_at',
        ],
        [
          { user_ids: [], status: 'nope' },
          'At least one user ID is required; status must be one of active, inactive, completed',
        ],
        // The stored starts_at with a new ends_at before it.
        [{ user_ids: [ann.id], ends_at: '2029-12-31T23:00:00Z' }, 'ends_at must be after starts_at'],
      ];
      for (const [body, message] of cases) {
        expect({ body, answer: await post(body) }).toMatchObject({
          body,
          answer: { status: 400, body: failure(message) },
        });
      }
      expect(await stored(ann)).toEqual({
        role: 'Student',
        status: 'active',
        starts_at: '2030-01-01T00:00:00.000Z',
        ends_at: null,
      });
      expect(await membersEvents()).toEqual([]);
      // The fields belong to POST only: DELETE refuses them as unknown properties.
      expect(
        await api.delete(path, { token: adminToken, body: { user_ids: [ann.id], status: 'active' } }),
      ).toMatchObject({ status: 400, body: failure('property status should not exist') });
    });
  });

  describe('PATCH /api/modules/{module_id}/members', () => {
    const path = () => `/api/modules/${module.id}/members`;

    it('updates the named members, keeping their roles, with one audit event and one change event', async () => {
      const ann = await makeUser(app.dataSource);
      const bob = await makeUser(app.dataSource);
      await member(ann, 'Student');
      await member(bob, 'Tutor', { status: 'inactive', starts_at: '2030-01-01T00:00:00.000Z' });
      const answer = await api.request('PATCH', path(), {
        token: adminToken,
        body: {
          user_ids: [ann.id, bob.id, ann.id],
          status: 'completed',
          ends_at: '2031-06-30T12:00:00+02:00',
        },
      });
      expect(answer).toMatchObject({
        status: 200,
        body: { success: true, message: 'Memberships updated', data: { updated: 2 } },
      });
      expect(await stored(ann)).toEqual({
        role: 'Student',
        status: 'completed',
        starts_at: null,
        ends_at: '2031-06-30T10:00:00.000Z',
      });
      expect(await stored(bob)).toEqual({
        role: 'Tutor',
        status: 'completed',
        starts_at: '2030-01-01T00:00:00.000Z',
        ends_at: '2031-06-30T10:00:00.000Z',
      });
      const audit = await auditEvents(app.dataSource, 'members.update');
      expect(audit).toHaveLength(1);
      expect(await membersEvents()).toEqual([
        {
          module_id: Number(module.id),
          added: [],
          removed: [],
          changed: [],
          status_changed: [
            { user_id: Number(ann.id), from: 'active', to: 'completed' },
            { user_id: Number(bob.id), from: 'inactive', to: 'completed' },
          ].sort((a, b) => a.user_id - b.user_id),
        },
      ]);
      // The same again changes nothing and writes no event.
      expect(
        await api.request('PATCH', path(), {
          token: adminToken,
          body: { user_ids: [ann.id, bob.id], status: 'completed' },
        }),
      ).toMatchObject({ status: 200, body: { data: { updated: 2 } } });
      expect(await membersEvents()).toHaveLength(1);
    });

    it("answers each failure with its message, in the contract's order, and changes nothing", async () => {
      const lecturerUser = await makeUser(app.dataSource);
      const otherLecturer = await makeUser(app.dataSource);
      const ann = await makeUser(app.dataSource);
      const outsider = await makeUser(app.dataSource);
      const tutor = await makeUser(app.dataSource);
      await member(lecturerUser, 'Lecturer');
      await member(otherLecturer, 'Lecturer');
      await member(ann, 'Student', { starts_at: '2030-01-01T00:00:00.000Z' });
      await member(tutor, 'Tutor');
      const lecturer = tokenFor(lecturerUser);
      const patch = (body: unknown, token = adminToken, id: number | string = module.id) =>
        api.request('PATCH', `/api/modules/${id}/members`, { token, body });
      const cases: [string, Promise<any>, number, string][] = [
        ['empty list', patch({ user_ids: [], status: 'active' }), 400, 'At least one user ID is required'],
        ['no field', patch({ user_ids: [ann.id] }), 400, 'At least one field must be provided'],
        [
          'bad status',
          patch({ user_ids: [ann.id], status: 'done' }),
          400,
          'status must be one of active, inactive, completed',
        ],
        [
          'bad date',
          patch({ user_ids: [ann.id], starts_at: 'soon' }),
          400,
          'starts_at must be an RFC 3339 timestamp',
        ],
        [
          'unknown field',
          patch({ user_ids: [ann.id], role: 'Tutor' }),
          400,
          'At least one field must be provided; property role should not exist',
        ],
        [
          'unknown module',
          patch({ user_ids: [ann.id], status: 'active' }, adminToken, 999_999_999),
          404,
          'Module not found',
        ],
        [
          'unknown user',
          patch({ user_ids: [ann.id, 999_999_999], status: 'active' }),
          404,
          'User with ID 999999999 does not exist',
        ],
        ['a Tutor', patch({ user_ids: [ann.id], status: 'active' }, tokenFor(tutor)), 403, PERMISSION_DENIED],
        [
          'a Lecturer on a Lecturer, before the 409',
          patch({ user_ids: [otherLecturer.id, outsider.id], status: 'inactive' }, lecturer),
          403,
          PERMISSION_DENIED,
        ],
        [
          'a non-member',
          patch({ user_ids: [ann.id, outsider.id], status: 'inactive' }),
          409,
          'Some users are not members of this module',
        ],
        [
          'dates out of order with the stored start',
          patch({ user_ids: [ann.id], ends_at: '2029-01-01T00:00:00Z' }),
          400,
          'ends_at must be after starts_at',
        ],
      ];
      for (const [name, pending, status, message] of cases) {
        expect({ name, answer: await pending }).toMatchObject({
          name,
          answer: { status, body: failure(message) },
        });
      }
      expect(await stored(ann)).toEqual({
        role: 'Student',
        status: 'active',
        starts_at: '2030-01-01T00:00:00.000Z',
        ends_at: null,
      });
      expect(await stored(otherLecturer)).toMatchObject({ status: 'active' });
      expect(await membersEvents()).toEqual([]);
      // A Lecturer may update the other members.
      expect(await patch({ user_ids: [ann.id, tutor.id], status: 'inactive' }, lecturer)).toMatchObject({
        status: 200,
        body: { data: { updated: 2 } },
      });
    });
  });

  describe('roster import with membership columns', () => {
    const importPath = (query = '') => `/api/modules/${module.id}/roster/import${query}`;

    it('sets status and dates from the file, an empty cell being the default, and keeps them when the columns are absent', async () => {
      const ann = await makeUser(app.dataSource, { username: 'ann' });
      const bob = await makeUser(app.dataSource, { username: 'bob' });
      const cy = await makeUser(app.dataSource, { username: 'cy' });
      await member(ann, 'Student', { status: 'inactive', ends_at: '2031-01-01T00:00:00.000Z' });
      await member(bob, 'Student');
      const file =
        'user,role,status,starts_at,ends_at\n' +
        'ann,Student,,,\n' +
        'bob,Student,completed,2030-01-01T00:00:00Z,2030-06-01T00:00:00Z\n' +
        'cy,Tutor,,2030-09-01T08:00:00+02:00,\n';
      const answer = await postCsv(api, importPath(), adminToken, file);
      expect(answer.status).toBe(200);
      expect(answer.body.data.rows.map((row: any) => row.action)).toEqual(['change', 'change', 'assign']);
      expect(answer.body.data).toMatchObject({ assigned: 1, changed: 2, unchanged: 0 });
      expect(await stored(ann)).toEqual({
        role: 'Student',
        status: 'active',
        starts_at: null,
        ends_at: null,
      });
      expect(await stored(bob)).toEqual({
        role: 'Student',
        status: 'completed',
        starts_at: '2030-01-01T00:00:00.000Z',
        ends_at: '2030-06-01T00:00:00.000Z',
      });
      expect(await stored(cy)).toEqual({
        role: 'Tutor',
        status: 'active',
        starts_at: '2030-09-01T06:00:00.000Z',
        ends_at: null,
      });
      // The same file again: unchanged; a file without the columns keeps the stored values.
      const again = await postCsv(api, importPath(), adminToken, file);
      expect(again.body.data.rows.map((row: any) => row.action)).toEqual([
        'unchanged',
        'unchanged',
        'unchanged',
      ]);
      const plain = await postCsv(api, importPath(), adminToken, 'user,role\nbob,Student\ncy,Tutor\n');
      expect(plain.body.data.rows.map((row: any) => row.action)).toEqual(['unchanged', 'unchanged']);
      expect(await stored(bob)).toMatchObject({ status: 'completed', ends_at: '2030-06-01T00:00:00.000Z' });
    });

    it('reports bad membership cells as row errors and changes nothing', async () => {
      const ann = await makeUser(app.dataSource, { username: 'ann' });
      await member(ann, 'Student', { starts_at: '2030-01-01T00:00:00.000Z' });
      const answer = await postCsv(
        api,
        importPath(),
        adminToken,
        'user,role,status,ends_at\nann,Student,gone,2029-01-01T00:00:00Z\nann2,Student,active,tomorrow\n',
      );
      expect(answer.status).toBe(422);
      expect(answer.body.data.rows.map((row: any) => row.errors)).toEqual([
        ['status must be one of active, inactive, completed', 'ends_at must be after starts_at'],
        ['Unknown user: ann2', 'ends_at must be an RFC 3339 timestamp'],
      ]);
      expect(await stored(ann)).toMatchObject({ status: 'active', ends_at: null });
    });

    it('concludes instead of deleting with on_remove, counting toward max_removals', async () => {
      const keep = await makeUser(app.dataSource, { username: 'keep' });
      const gone = await makeUser(app.dataSource, { username: 'gone' });
      const left = await makeUser(app.dataSource, { username: 'left' });
      await member(keep, 'Student');
      await member(gone, 'Student');
      await member(left, 'Tutor');
      expect(
        await postCsv(
          api,
          importPath('?mode=sync&on_remove=archive'),
          adminToken,
          'user,role\nkeep,Student\n',
        ),
      ).toMatchObject({
        status: 400,
        body: failure('on_remove must be one of delete, complete, inactivate'),
      });
      expect(
        await postCsv(
          api,
          importPath('?mode=sync&on_remove=complete&max_removals=1'),
          adminToken,
          'user,role\nkeep,Student\n',
        ),
      ).toMatchObject({ status: 409, body: failure('Sync would remove 2 members; the limit is 1') });
      const answer = await postCsv(
        api,
        importPath('?mode=sync&on_remove=complete&max_removals=2'),
        adminToken,
        'user,role\nkeep,Student\n',
      );
      expect(answer.status).toBe(200);
      expect(answer.body.data.removed).toEqual([
        { user_id: Number(gone.id), username: 'gone', role: 'Student' },
        { user_id: Number(left.id), username: 'left', role: 'Tutor' },
      ]);
      expect(await stored(gone)).toMatchObject({ role: 'Student', status: 'completed' });
      expect(await stored(left)).toMatchObject({ role: 'Tutor', status: 'completed' });
      expect((await membersEvents()).at(-1)).toEqual({
        module_id: Number(module.id),
        added: [],
        removed: [],
        changed: [],
        status_changed: [
          { user_id: Number(gone.id), from: 'active', to: 'completed' },
          { user_id: Number(left.id), from: 'active', to: 'completed' },
        ],
      });
      // Again: nothing left to conclude. With inactivate, the concluded stay as they are; delete removes them.
      const again = await postCsv(
        api,
        importPath('?mode=sync&on_remove=inactivate'),
        adminToken,
        'user,role\nkeep,Student\n',
      );
      expect(again.body.data.removed).toEqual([]);
      const deleted = await postCsv(
        api,
        importPath('?mode=sync&max_removals=5'),
        adminToken,
        'user,role\nkeep,Student\n',
      );
      expect(deleted.body.data.removed).toHaveLength(2);
      expect(await stored(gone)).toBeUndefined();
    });
  });
});

/**
 * docs/api.md §15, "Time": when a `starts_at` or `ends_at` passes, one `module.members_changed` event with
 * `effective` is written within 60 s, once, however many replicas run. Two replicas of the service share one
 * database here, each sweeping every second.
 */
const INTERVAL_MS = 1000;

describe('time-based membership events on two replicas', () => {
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    [first, second] = await Promise.all([
      startTestApp({ membershipSweepIntervalMs: INTERVAL_MS, backgroundWorkers: true }),
      startTestApp({ membershipSweepIntervalMs: INTERVAL_MS, backgroundWorkers: true }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
  });

  const rounds = () => [first, second].map((app) => app.service.app.get(MembershipSweep).rounds);

  /** The `module.members_changed` events with `effective`, oldest first, with the time each was written. */
  const timeEvents = (moduleId: number) =>
    first.dataSource.query<{ data: any; at: Date }[]>(
      `SELECT data, at FROM change_events
       WHERE type = 'module.members_changed' AND data ? 'effective' AND (data->>'module_id')::bigint = $1
       ORDER BY id`,
      [moduleId],
    );

  it('writes one event per module when windows open and close, once, within the interval', async () => {
    await first.reset();
    const admin = await makeUser(first.dataSource, { admin: true });
    const token = tokenFor(admin);
    const module = await makeModule(first.dataSource);
    const other = await makeModule(first.dataSource);
    const leaving = await makeUser(first.dataSource);
    const joining = await makeUser(first.dataSource);
    const elsewhere = await makeUser(first.dataSource);
    const dropped = await makeUser(first.dataSource);
    const members = (moduleId: number) => `/api/modules/${moduleId}/students`;
    // One instant, a few seconds ahead: one membership ends then, one starts, one of another module ends; an
    // inactive membership's end changes nothing and is not reported.
    const instant = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
    const at = instant.toISOString();
    const enrol = async (moduleId: number, body: Record<string, unknown>) =>
      expect((await request(first.url, 'POST', members(moduleId), { token, body })).status).toBe(200);
    await enrol(module.id, { user_ids: [leaving.id], ends_at: at });
    await enrol(module.id, { user_ids: [joining.id], starts_at: at });
    await enrol(module.id, { user_ids: [dropped.id], status: 'inactive', ends_at: at });
    await enrol(other.id, { user_ids: [elsewhere.id], ends_at: at });
    expect(await timeEvents(module.id)).toEqual([]);

    const [event] = await waitFor(
      async () => {
        const events = await timeEvents(module.id);
        return events.length > 0 && events;
      },
      { what: 'the time event of the module', timeoutMs: 60_000, intervalMs: 25 },
    );
    const seenAfter = Date.now() - instant.getTime();
    const writtenAfter = event.at.getTime() - instant.getTime();
    expect(event.data).toEqual({
      module_id: Number(module.id),
      added: [],
      removed: [],
      changed: [],
      effective: [
        { user_id: Number(leaving.id), effective_status: 'completed' },
        { user_id: Number(joining.id), effective_status: 'active' },
      ].sort((a, b) => a.user_id - b.user_id),
    });
    expect(writtenAfter).toBeGreaterThanOrEqual(0);
    expect(seenAfter).toBeLessThan(60_000);
    const [otherEvent] = await waitFor(
      async () => {
        const events = await timeEvents(other.id);
        return events.length > 0 && events;
      },
      { what: 'the time event of the other module', timeoutMs: 60_000 },
    );
    expect(otherEvent.data.effective).toEqual([
      { user_id: Number(elsewhere.id), effective_status: 'completed' },
    ]);

    // Once: both replicas sweep three more rounds each, and no second event appears.
    const after = rounds();
    await waitFor(() => rounds().every((count, i) => count >= after[i] + 3), {
      what: 'three more sweep rounds on each replica',
      timeoutMs: 30_000,
    });
    expect(await timeEvents(module.id)).toHaveLength(1);
    expect(await timeEvents(other.id)).toHaveLength(1);
    // The lists agree with the event.
    const list = await request(first.url, 'GET', `/api/modules/${module.id}/students`, { token });
    const byUser = Object.fromEntries(
      list.body.data.users.map((user: any) => [user.id, user.effective_status]),
    );
    expect(byUser).toEqual({ [leaving.id]: 'completed', [joining.id]: 'active', [dropped.id]: 'inactive' });
    console.log(
      `membership time events on two replicas (sweep every ${INTERVAL_MS} ms): ends_at passed → event written ` +
        `${writtenAfter} ms later (its transaction's time), seen in the outbox ${seenAfter} ms later`,
    );
  });
});
