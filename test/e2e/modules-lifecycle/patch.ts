// Part of test/modules-lifecycle.e2e-spec.ts: PATCH /api/modules/{module_id}/members.
import { auditEvents } from '../../support/csv.js';
import { makeUser, tokenFor } from '../../support/factories.js';
import { failure, PERMISSION_DENIED } from '../../support/modules-fixtures.js';
import { type LifecycleContext } from './context.js';

export function membersPatchTests(ctx: LifecycleContext): void {
  const { app, api, member, stored, membersEvents, given } = ctx;

  describe('PATCH /api/modules/{module_id}/members', () => {
    const path = () => `/api/modules/${given.module.id}/members`;

    it('updates the named members, keeping their roles, with one audit event and one change event', async () => {
      const ann = await makeUser(app.dataSource);
      const bob = await makeUser(app.dataSource);
      await member(ann, 'Student');
      await member(bob, 'Tutor', { status: 'inactive', starts_at: '2030-01-01T00:00:00.000Z' });
      const answer = await api.request('PATCH', path(), {
        token: given.adminToken,
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
          module_id: Number(given.module.id),
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
          token: given.adminToken,
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
      const patch = (body: unknown, token = given.adminToken, id: number | string = given.module.id) =>
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
          patch({ user_ids: [ann.id], status: 'active' }, given.adminToken, 999_999_999),
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
}
