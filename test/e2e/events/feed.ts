// Part of test/events.e2e-spec.ts: reading the feed.
import { ChangeEventsService } from '../../../src/events/change-events.service.js';
import { makeUser, tokenFor } from '../../support/factories.js';
import { failure } from '../../support/modules-fixtures.js';
import { type ChangeFeedContext, type FeedEvent } from './context.js';

export function feedTests(ctx: ChangeFeedContext): void {
  const { app, api, feed, readAll, types, end, given } = ctx;

  describe('the feed', () => {
    it('serves events in order with opaque cursors; next is the last event, or the same after', async () => {
      const empty = await feed();
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({
        success: true,
        message: 'Events retrieved successfully',
        data: { events: [], next: expect.any(String) },
      });
      const created = await api.post('/api/modules', {
        token: given.token,
        body: { code: 'CSC101', year: 2026, description: 'Intro', credits: 15 },
      });
      const res = await feed(`?after=${empty.body.data.next}`);
      expect(res.body.data.events).toEqual([
        {
          id: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
          type: 'module.created',
          at: expect.any(String),
          data: created.body.data,
        },
      ]);
      const [event] = res.body.data.events as FeedEvent[];
      expect(event.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(res.body.data.next).toBe(event.id);
      // Nothing new: the same after comes back.
      expect((await feed(`?after=${event.id}`)).body.data).toEqual({ events: [], next: event.id });
      // Without after: from the oldest kept event.
      expect(types((await feed()).body.data.events)).toEqual(['module.created']);
    });

    it('filters by type and pages with limit', async () => {
      const start = await end();
      for (const code of ['AAA111', 'BBB222', 'CCC333'])
        await api.post('/api/modules', { token: given.token, body: { code, year: 2026, credits: 5 } });
      const ann = await api.post('/api/users', {
        token: given.token,
        body: { username: 'ann', email: 'ann@example.edu', password: 'correct-horse-battery' },
      });
      expect(ann.status).toBe(201);
      const users = await readAll(start, 'user.created, user.deleted');
      expect(users.events).toEqual([expect.objectContaining({ type: 'user.created', data: ann.body.data })]);
      const page = await feed(`?after=${start}&limit=2`);
      expect(types(page.body.data.events)).toEqual(['module.created', 'module.created']);
      const rest = await feed(`?after=${page.body.data.next}&limit=0`);
      // limit is clamped to 1..1000, like per_page.
      expect(types(rest.body.data.events)).toEqual(['module.created']);
      expect(types((await feed(`?after=${rest.body.data.next}`)).body.data.events)).toEqual(['user.created']);
    });

    it.each([
      ['?after=nope!', 'Invalid cursor'],
      [`?after=${Buffer.from('12').toString('base64url')}`, 'Invalid cursor'],
      ['?after=', 'Invalid cursor'],
      ['?types=module.exploded', 'Invalid event type'],
      ['?types=module.created,webhook.test', 'Invalid event type'],
      ['?types=,', 'Invalid event type'],
      ['?limit=ten', 'limit must be an integer'],
      ['?wait=1.5', 'wait must be an integer'],
    ])('answers 400 to %s', async (query, message) => {
      expect(await feed(query)).toMatchObject({ status: 400, body: failure(message) });
    });

    it('answers 410 to a cursor older than what retention pruned, and serves the cursors after it', async () => {
      const start = await end();
      await api.post('/api/modules', {
        token: given.token,
        body: { code: 'OLD111', year: 2026, credits: 5 },
      });
      await api.post('/api/modules', {
        token: given.token,
        body: { code: 'NEW222', year: 2026, credits: 5 },
      });
      const [old, young] = (await readAll(start)).events;
      await app.dataSource.query(
        `UPDATE change_events SET at = now() - interval '40 days' WHERE data->>'code' = 'OLD111'`,
      );
      const pruned = await app.service.app.get(ChangeEventsService).prune();
      expect(pruned).toBeGreaterThanOrEqual(1);
      expect(await feed(`?after=${start}`)).toMatchObject({
        status: 410,
        body: failure('Cursor expired; start again without after'),
      });
      // The pruned event's own cursor saw everything pruned: it goes on.
      expect((await feed(`?after=${old.id}`)).body.data.events).toEqual([young]);
      expect((await feed()).body.data.events).toEqual([young]);
      // The watermark survives an empty table: a reader without after starts after it.
      await app.dataSource.query(`DELETE FROM change_events`);
      const next = (await feed()).body.data.next as string;
      expect(await feed(`?after=${next}`)).toMatchObject({ status: 200 });
      expect(await feed(`?after=${start}`)).toMatchObject({ status: 410 });
    });

    it('is for admins only', async () => {
      const user = await makeUser(app.dataSource);
      expect(await api.get('/api/events', { token: tokenFor(user) })).toMatchObject({ status: 403 });
      expect(await api.get('/api/events')).toMatchObject({ status: 401 });
    });
  });
}
