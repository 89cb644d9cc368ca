// Part of test/modules-lifecycle.e2e-spec.ts: personnel and student POST with membership fields.
import { makeUser } from '../../support/factories.js';
import { failure } from '../../support/modules-fixtures.js';
import { future, type LifecycleContext } from './context.js';

export function membershipPostTests(ctx: LifecycleContext): void {
  const { app, api, member, stored, membersEvents, given } = ctx;

  describe('personnel and student POST with membership fields', () => {
    it('sets the fields on new memberships, keeps stored values for omitted fields, and reports status changes', async () => {
      const ann = await makeUser(app.dataSource);
      const bob = await makeUser(app.dataSource);
      const starts = future(1);
      const ends = future(30);
      const path = `/api/modules/${given.module.id}/students`;
      expect(
        await api.post(path, {
          token: given.adminToken,
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
          token: given.adminToken,
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
        await api.post(`/api/modules/${given.module.id}/personnel`, {
          token: given.adminToken,
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
          module_id: Number(given.module.id),
          added: [{ user_id: Number(ann.id), role: 'Student' }],
          removed: [],
          changed: [],
        },
        {
          module_id: Number(given.module.id),
          added: [{ user_id: Number(bob.id), role: 'Student' }],
          removed: [],
          changed: [],
          status_changed: [{ user_id: Number(ann.id), from: 'active', to: 'completed' }],
        },
        {
          module_id: Number(given.module.id),
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
      const path = `/api/modules/${given.module.id}/students`;
      const post = (body: unknown) => api.post(path, { token: given.adminToken, body });
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
        await api.delete(path, { token: given.adminToken, body: { user_ids: [ann.id], status: 'active' } }),
      ).toMatchObject({ status: 400, body: failure('property status should not exist') });
    });
  });
}
