// Part of test/events.e2e-spec.ts: a thousand events in one request, and the held requests at shutdown.
import { ChangeEventsRepository } from '../../../src/events/change-events.repository.js';
import { ChangeEventsService } from '../../../src/events/change-events.service.js';
import { startTestApp } from '../../support/app.js';
import { request } from '../../support/http.js';
import { failure } from '../../support/modules-fixtures.js';
import { eventually } from '../../support/users-helpers.js';
import { type ChangeFeedContext, median } from './context.js';

export function volumeAndShutdownTests(ctx: ChangeFeedContext): void {
  const { app, feed, end, given } = ctx;

  it('serves 1 000 events in one request in well under a second (measured)', async () => {
    const start = await end();
    const repository = app.service.app.get(ChangeEventsRepository);
    const data = {
      id: 1,
      code: 'CSC101',
      year: 2026,
      description: 'An introduction to programming, with a description of typical length',
      credits: 15,
      created_at: '2026-11-21T08:41:00.123Z',
      updated_at: '2026-11-21T08:41:00.123Z',
    };
    await app.dataSource.transaction((manager) =>
      repository.append(
        manager,
        Array.from({ length: 1000 }, () => ({ type: 'module.updated' as const, data })),
      ),
    );
    const timings: number[] = [];
    for (let i = 0; i < 7; i++) {
      const began = performance.now();
      const res = await feed(`?after=${start}&limit=1000`);
      timings.push(performance.now() - began);
      expect(res.body.data.events).toHaveLength(1000);
    }
    console.log(
      `feed: 1000 events in one request: ${timings.map((ms) => ms.toFixed(1)).join(', ')} ms (median ${median(timings).toFixed(1)} ms)`,
    );
    expect(median(timings)).toBeLessThan(1000);
  });

  // Last: a second service in this process takes over passport's global 'jwt' strategy, so once it is closed the
  // first one can no longer authenticate requests.
  describe('shutdown', () => {
    const held = (service: ChangeEventsService, count: number) =>
      eventually(() => Promise.resolve(service.waiting === count));

    it('holds at most EVENT_FEED_MAX_WAITING requests and answers them at once when the service stops', async () => {
      const other = await startTestApp({ eventFeedMaxWaiting: 2 });
      try {
        const service = other.service.app.get(ChangeEventsService);
        const after = await end();
        const poll = () =>
          request(other.url, 'GET', `/api/events?after=${after}&wait=30`, { token: given.token }).then(
            (res) => ({
              res,
              at: performance.now(),
            }),
          );
        const polls = [poll(), poll()];
        await held(service, 2);
        expect(
          await request(other.url, 'GET', `/api/events?after=${after}&wait=30`, { token: given.token }),
        ).toMatchObject({
          status: 503,
          body: failure('Too many requests are waiting for events; try again later'),
        });
        // Without wait a request holds no slot.
        expect(
          (await request(other.url, 'GET', `/api/events?after=${after}`, { token: given.token })).status,
        ).toBe(200);
        const stopping = performance.now();
        await other.close();
        for (const { res, at } of await Promise.all(polls)) {
          expect(res).toMatchObject({ status: 200, body: { data: { events: [], next: after } } });
          expect(at - stopping).toBeLessThan(2000);
        }
      } finally {
        await other.close();
      }
    });
  });
}
