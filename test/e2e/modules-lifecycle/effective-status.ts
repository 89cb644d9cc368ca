// Part of test/modules-lifecycle.e2e-spec.ts: the effective status in the lists.
import { csvLines } from '../../support/csv.js';
import { failure } from '../../support/modules-fixtures.js';
import { type LifecycleContext } from './context.js';

export function effectiveStatusTests(ctx: LifecycleContext): void {
  const { api, studentsOfEachStatus, given } = ctx;

  describe('effective status in the lists', () => {
    it('shows status, dates and the effective status of every membership, and filters by effective status', async () => {
      const s = await studentsOfEachStatus();
      const list = await api.get(`/api/modules/${given.module.id}/students`, { token: given.adminToken });
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
        const answer = await api.get(`/api/modules/${given.module.id}/${path}?status=${status}`, {
          token: given.adminToken,
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
          await api.get(`/api/modules/${given.module.id}/${path}?status=gone`, { token: given.adminToken }),
        ).toMatchObject({
          status: 400,
          body: failure('status must be one of active, upcoming, completed, inactive, all'),
        });
      }
    });

    it('exports the membership columns in roster.csv, filtered like the list', async () => {
      const s = await studentsOfEachStatus();
      const answer = await api.get(`/api/modules/${given.module.id}/roster.csv?status=active`, {
        token: given.adminToken,
      });
      expect(answer.status).toBe(200);
      const lines = csvLines(answer.body);
      expect(lines).toEqual([
        'user_id,username,email,role,status,starts_at,ends_at,effective_status',
        `${s.active.id},a-active,a-active@example.edu,Student,active,${new Date(s.window.starts_at).toISOString()},${new Date(s.window.ends_at).toISOString()},active`,
      ]);
      const all = csvLines(
        (await api.get(`/api/modules/${given.module.id}/roster.csv`, { token: given.adminToken })).body,
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
      const read = await api.get(`/api/modules/${given.module.id}`, { token: given.adminToken });
      expect(read.status).toBe(200);
      expect(read.body.data.students.map((user: any) => user.username)).toEqual([s.active.username]);
    });
  });
}
