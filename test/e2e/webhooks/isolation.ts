// Part of test/webhooks.e2e-spec.ts: receivers are isolated.
import { CHANGE_EVENTS_CHANNEL } from '../../../src/events/change-events.repository.js';
import { type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { eventually, startReceiver } from '../../support/webhook-receiver.js';
import { percentile } from './context.js';

/**
 * Receivers are isolated: with one receiver that never answers and one that trickles a 5 MiB answer, a
 * healthy receiver still gets each event once, p95 within 3 s of the commit (the contract's bound), with the
 * attempt's real 10 s deadline. The figures go to docs/webhooks.md.
 */
const EVENTS = 20;
/** The writes' pace: a steady stream, as changes come, not one burst. */
const WRITE_GAP_MS = 250;

export function receiversIsolated({ app, api }: UsedTestApp): void {
  const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  it('delivers to a healthy receiver promptly, each event once, beside a hung and a trickling receiver', async () => {
    const { token } = await freshAdmin(app);
    const hung = await startReceiver(() => 'hang');
    // 200 at once, then 512 bytes every 250 ms of a 5 MiB body (it would take 43 minutes to send).
    const timers = new Set<NodeJS.Timeout>();
    const trickling = await startReceiver(() => (response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(5 * 1024 * 1024) });
      const timer = setInterval(() => {
        if (response.destroyed) clearInterval(timer);
        else response.write('x'.repeat(512));
      }, 250);
      timers.add(timer);
    });
    const healthy = await startReceiver();
    receivers.push(hung, trickling, healthy);
    const ids: Record<string, number> = {};
    for (const [name, target] of Object.entries({ hung, trickling, healthy })) {
      const created = await api.post('/api/webhooks', {
        token,
        body: { url: target.url, types: ['module.updated'] },
      });
      expect(created.status).toBe(201);
      ids[name] = created.body.data.id;
    }
    try {
      const committed = new Map<number, number>();
      for (let n = 0; n < EVENTS; n++) {
        await app.dataSource.query(
          `WITH written AS (
             INSERT INTO change_events (type, data) VALUES ('module.updated', jsonb_build_object('n', $1::int))
             RETURNING 1
           )
           SELECT pg_notify('${CHANGE_EVENTS_CHANNEL}', '') FROM written`,
          [n],
        );
        committed.set(n, Date.now());
        await new Promise((resolve) => setTimeout(resolve, WRITE_GAP_MS));
      }
      await healthy.waitFor(
        (got) => new Set(got.map((one) => one.headers['webhook-id'])).size === EVENTS,
        60_000,
      );
      const latencies = healthy.received
        .map((got) => got.at - committed.get((JSON.parse(got.body) as { data: { n: number } }).data.n)!)
        .sort((a, b) => a - b);
      console.log(
        `webhooks isolation: healthy receiver beside a hung and a trickling one, ${EVENTS} events: ` +
          `p50 ${percentile(latencies, 50)} ms, p95 ${percentile(latencies, 95)} ms, max ${latencies.at(-1)} ms`,
      );
      // Each event once (nothing failed, so nothing was retried), p95 within 3 s of the commit.
      expect(healthy.received).toHaveLength(EVENTS);
      expect(percentile(latencies, 95)).toBeLessThanOrEqual(3000);
      // The others' attempts are recorded too: the trickling one read 1 KiB and was closed, the hung one timed out.
      const rows = await eventually(async () => {
        const found = await app.dataSource.query<
          {
            webhook_id: string;
            outcome: string;
            error: string | null;
            status_code: number | null;
            duration_ms: number;
          }[]
        >(`SELECT webhook_id::text, outcome, error, status_code, duration_ms FROM webhook_deliveries`);
        const of = (name: string) => found.filter((row) => row.webhook_id === String(ids[name]));
        return of('hung').length > 0 && of('trickling').length > 0 ? { of } : undefined;
      }, 20_000);
      expect(rows.of('healthy')).toHaveLength(EVENTS);
      expect(rows.of('hung')[0]).toMatchObject({ status_code: null, error: 'No answer within 10000 ms' });
      expect(rows.of('trickling')[0]).toMatchObject({ status_code: 200, outcome: 'delivered' });
      expect(rows.of('trickling')[0].duration_ms).toBeLessThan(5000);
    } finally {
      for (const timer of timers) clearInterval(timer);
    }
  });
}
