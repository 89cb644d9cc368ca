// Part of test/events.e2e-spec.ts: long-poll fan-out.
import { ChangeEventsService } from '../../../src/events/change-events.service.js';
import { Metrics } from '../../../src/observability/metrics.js';
import { type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { waitFor } from '../../support/wait-for.js';

/** Feed reads this replica made, by kind (`change_event_feed_reads_total`, docs/operations.md). */
async function feedReads(metrics: Metrics): Promise<number> {
  const metric = metrics.registry.getSingleMetric('change_event_feed_reads_total');
  if (metric === undefined) throw new Error('change_event_feed_reads_total is not registered');
  return (await metric.get()).values.reduce((sum, value) => sum + value.value, 0);
}

/**
 * docs/events.md, "Long-poll": a commit wakes the requests a replica holds with one read of the feed, whose
 * events are handed to each request by its own `after`, `types` and `limit`.
 */
export function longPollFanOut({ app, api }: UsedTestApp): void {
  let token: string;

  beforeEach(async () => {
    ({ token } = await freshAdmin(app, { username: 'root' }));
  });

  const feed = (query: string) => api.get(`/api/events${query}`, { token });

  it('answers many held requests from one read per wake-up, each by its own after, types and limit', async () => {
    const service = app.service.app.get(ChangeEventsService);
    const metrics = app.service.app.get(Metrics);
    // Two events already there: `start` is before both, `end` after both.
    const start = (await feed('')).body.data.next as string;
    await api.post('/api/modules', { token, body: { code: 'FAN001', year: 2026, credits: 5 } });
    await api.post('/api/users', {
      token,
      body: { username: 'fanout', email: 'fanout@example.edu', password: 'a-long-password-1' },
    });
    const first = await feed(`?after=${start}`);
    expect(first.body.data.events.map((event: { type: string }) => event.type)).toEqual([
      'module.created',
      'user.created',
    ]);
    const end = first.body.data.next as string;

    const all = Array.from({ length: 30 }, () => feed(`?after=${end}&wait=20`));
    const limited = Array.from({ length: 5 }, () => feed(`?after=${end}&wait=20&limit=1`));
    // Not their type: these stay held after the commit, and answer empty when their wait is over.
    const others = Array.from({ length: 5 }, () => feed(`?after=${end}&wait=3&types=user.deleted`));
    await waitFor(() => service.waiting === 40, { what: '40 held requests' });

    const readsBefore = await feedReads(metrics);
    const created = await api.post('/api/modules', {
      token,
      body: { code: 'FAN002', year: 2026, credits: 5 },
    });
    expect(created.status).toBe(201);
    for (const res of await Promise.all([...all, ...limited])) {
      expect(res.status).toBe(200);
      expect(res.body.data.events.map((event: { data: { id: number } }) => event.data.id)).toEqual([
        created.body.data.id,
      ]);
      expect(res.body.data.next).toBe(res.body.data.events[0].id);
    }
    const wakeReads = (await feedReads(metrics)) - readsBefore;
    for (const res of await Promise.all(others)) {
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ events: [], next: end });
    }
    console.log(`one commit, 40 held requests: ${wakeReads} feed read(s) to answer the 35 it concerned`);
    // One read per wake-up; a second only if the event was still behind another transaction at the first.
    expect(wakeReads).toBeLessThanOrEqual(2);
  });
}
