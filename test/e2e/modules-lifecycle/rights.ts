// Part of test/modules-lifecycle.e2e-spec.ts: rights come from effective active memberships only.
import { postCsv } from '../../support/csv.js';
import { makeModule, makeUser, tokenFor } from '../../support/factories.js';
import { failure, PERMISSION_DENIED } from '../../support/modules-fixtures.js';
import { future, type Lifecycle, type LifecycleContext, past } from './context.js';

export function rightsTests(ctx: LifecycleContext): void {
  const { app, api, member, given } = ctx;

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
        const id = given.module.id;
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
      const current = given.module;
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
}
