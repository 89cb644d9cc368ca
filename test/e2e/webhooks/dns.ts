// Part of test/webhooks.e2e-spec.ts: webhook host names resolved under the attempt's deadline.
import { CHANGE_EVENTS_CHANNEL } from '../../../src/events/change-events.repository.js';
import { HostResolver } from '../../../src/webhooks/webhook-url.js';
import { type UsedTestApp } from '../../support/app.js';
import { DEFAULT_PASSWORD, makeUser, tokenFor } from '../../support/factories.js';
import { waitFor } from '../../support/wait-for.js';
import { startDnsServer } from '../../support/webhook-dns.js';
import { eventually, startReceiver } from '../../support/webhook-receiver.js';
import { percentile } from './context.js';

/**
 * Webhook host names are resolved off libuv's thread pool (c-ares), under the attempt's one deadline: a
 * receiver whose DNS never answers neither holds logins back (argon2 runs on that pool) nor makes an attempt
 * outlast WEBHOOK_TIMEOUT_MS. The DNS server is one of the test's own, on loopback.
 */
export const TIMEOUT_MS = 2000;

export function webhookDns({ app, api }: UsedTestApp): void {
  let dns: Awaited<ReturnType<typeof startDnsServer>>;

  beforeAll(async () => {
    dns = await startDnsServer({
      answers: { 'ok.hooks.test': '127.0.0.1' },
      stalled: ['stall.hooks.test'],
    });
    app.service.app.get(HostResolver).useServers([dns.server]);
  });
  afterAll(() => dns?.close());

  const writeEvents = (count: number) =>
    app.dataSource.query(
      `WITH written AS (
         INSERT INTO change_events (type, data)
         SELECT 'module.updated', jsonb_build_object('n', g) FROM generate_series(1, $1::int) g
         RETURNING 1
       )
       SELECT pg_notify('${CHANGE_EVENTS_CHANNEL}', '') FROM (SELECT 1) one WHERE EXISTS (SELECT 1 FROM written)`,
      [count],
    );

  /** `count` logins, 4 at a time (below the per-address limit), each one's time in ms, sorted. */
  async function loginTimes(username: string, count: number): Promise<number[]> {
    const times: number[] = [];
    for (let done = 0; done < count; done += 4) {
      await Promise.all(
        [0, 1, 2, 3].map(async () => {
          const started = performance.now();
          const res = await api.post('/api/auth/login', { body: { username, password: DEFAULT_PASSWORD } });
          expect(res.status).toBe(200);
          times.push(performance.now() - started);
        }),
      );
    }
    return times.sort((a, b) => a - b);
  }

  it('delivers to the address its DNS gave, and a stalled DNS bounds the attempt and leaves logins alone', async () => {
    await app.reset();
    const admin = await makeUser(app.dataSource, { admin: true });
    const token = tokenFor(admin);
    const target = await startReceiver();
    try {
      // Answered by the test's DNS server: delivered to the address it gave.
      const ok = await api.post('/api/webhooks', {
        token,
        body: { url: `http://ok.hooks.test:${target.port}/hook`, types: ['*'] },
      });
      expect(ok.status).toBe(201);
      await api.post(`/api/webhooks/${ok.body.data.id}/test`, { token });
      await target.waitFor((got) => got.length === 1);
      expect(dns.questions.some((question) => question.name === 'ok.hooks.test')).toBe(true);

      const baseline = await loginTimes(admin.username, 40);
      // A receiver whose host name never gets an answer (stored directly: creating it would wait for DNS too).
      const [stalled] = await app.dataSource.query<{ id: number }[]>(
        `INSERT INTO webhooks (url, types, secret) VALUES ('http://stall.hooks.test:9/hook', '{module.updated}', $1)
         RETURNING id`,
        [`whsec_${Buffer.alloc(24, 7).toString('base64')}`],
      );
      await writeEvents(16);
      await waitFor(
        () => dns.questions.filter((question) => question.name === 'stall.hooks.test').length >= 8,
        {
          what: 'lookups of the stalled host name',
        },
      );
      const during = await loginTimes(admin.username, 40);
      console.log(
        `webhooks DNS: logins p50/p99 ${Math.round(percentile(baseline, 50))}/${Math.round(percentile(baseline, 99))} ms ` +
          `before the stall, ${Math.round(percentile(during, 50))}/${Math.round(percentile(during, 99))} ms while a ` +
          `receiver's DNS stalls`,
      );
      expect(percentile(during, 99)).toBeLessThanOrEqual(2 * percentile(baseline, 99) + 500);
      // Each attempt ended at the one deadline, DNS included, and was recorded as such.
      const rows = await eventually(async () => {
        const found = await app.dataSource.query<{ error: string; duration_ms: number }[]>(
          `SELECT error, duration_ms FROM webhook_deliveries WHERE webhook_id = $1`,
          [stalled.id],
        );
        return found.length >= 8 ? found : undefined;
      });
      for (const row of rows) {
        expect(row.error).toBe(`No answer within ${TIMEOUT_MS} ms`);
        expect(row.duration_ms).toBeLessThan(TIMEOUT_MS + 1000);
      }
    } finally {
      await target.close();
    }
  });
}
