// Part of test/events.e2e-spec.ts: long-poll.
import { ChangeEventsService } from '../../../src/events/change-events.service.js';
import { failure } from '../../support/modules-fixtures.js';
import { makeIntegrationToken } from '../../support/token-fixtures.js';
import { eventually } from '../../support/users-helpers.js';
import { type ChangeFeedContext, median } from './context.js';

export function longPollTests(ctx: ChangeFeedContext): void {
  const { app, api, feed, types, end, given } = ctx;

  describe('long-poll', () => {
    const held = (service: ChangeEventsService, count: number) =>
      eventually(() => Promise.resolve(service.waiting === count));

    it('answers within a fraction of a second of a change, and after wait when nothing happens', async () => {
      const service = app.service.app.get(ChangeEventsService);
      const latencies: number[] = [];
      let cursor = await end();
      for (let i = 0; i < 5; i++) {
        const poll = feed(`?after=${cursor}&wait=10`).then((res) => ({ res, at: performance.now() }));
        await held(service, 1);
        const before = performance.now();
        const write = await api.post('/api/modules', {
          token: given.token,
          body: { code: `LAT${100 + i}`, year: 2026, credits: 5 },
        });
        expect(write.status).toBe(201);
        const { res, at } = await poll;
        expect(types(res.body.data.events)).toEqual(['module.created']);
        latencies.push(at - before);
        cursor = res.body.data.next;
      }
      console.log(
        `long-poll: answered ${latencies.map((ms) => ms.toFixed(1)).join(', ')} ms after the write was sent ` +
          `(median ${median(latencies).toFixed(1)} ms)`,
      );
      expect(median(latencies)).toBeLessThan(1000);

      const began = performance.now();
      const quiet = await feed(`?after=${cursor}&wait=1`);
      const waited = performance.now() - began;
      expect(quiet.body.data).toEqual({ events: [], next: cursor });
      expect(waited).toBeGreaterThanOrEqual(950);
      expect(waited).toBeLessThan(3000);
      expect(service.waiting).toBe(0);
    });

    it('holds at most 10 waiting requests of one integration token; the 11th gets 429 at once', async () => {
      const service = app.service.app.get(ChangeEventsService);
      const { token: lms } = await makeIntegrationToken(app.dataSource, ['events']);
      const after = await end();
      const poll = (bearer: string, wait: number) =>
        api.get(`/api/events?after=${after}&wait=${wait}`, { token: bearer });
      const polls = Array.from({ length: 9 }, () => poll(lms, 30));
      const short = poll(lms, 1);
      await held(service, 10);
      expect(await poll(lms, 30)).toMatchObject({
        status: 429,
        body: failure('Too many requests, try again later'),
      });
      // Without wait the token holds no place, and an admin's wait is not counted against it.
      expect((await api.get(`/api/events?after=${after}`, { token: lms })).status).toBe(200);
      polls.push(poll(given.token, 30));
      await held(service, 11);
      // Once one of its requests is answered, the token's next one waits again.
      expect(await short).toMatchObject({ status: 200, body: { data: { events: [], next: after } } });
      await held(service, 10);
      polls.push(poll(lms, 30));
      await held(service, 11);
      const write = await api.post('/api/modules', {
        token: given.token,
        body: { code: 'LMS101', year: 2026, credits: 5 },
      });
      expect(write.status).toBe(201);
      for (const res of await Promise.all(polls)) {
        expect(res.status).toBe(200);
        expect(types(res.body.data.events)).toEqual(['module.created']);
      }
      expect(service.waiting).toBe(0);
    });
  });
}
