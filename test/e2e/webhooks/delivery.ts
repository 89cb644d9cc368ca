// Part of test/webhooks.e2e-spec.ts: deliveries.
import { Webhook } from 'standardwebhooks';
import { Transactions } from '../../../src/database/transactions.js';
import { Metrics } from '../../../src/observability/metrics.js';
import { DeliveryQueue } from '../../../src/webhooks/delivery-queue.js';
import { WebhookDeliverer } from '../../../src/webhooks/webhook-deliverer.js';
import { eventually, verified } from '../../support/webhook-receiver.js';
import { type WebhooksContext } from './context.js';

export function deliveryTests(ctx: WebhooksContext): void {
  const { app, api, receiver, create, deliveries, given } = ctx;

  describe('delivery', () => {
    it('delivers the test event signed with the Standard Webhooks scheme, verified by the package', async () => {
      const target = await receiver();
      const created = (await create({ url: target.url, types: ['module.created'] })).body.data;
      const res = await api.post(`/api/webhooks/${created.id}/test`, { token: given.token });
      expect(res.status).toBe(202);
      expect(res.body.message).toBe('Test event queued');
      const eventId: string = res.body.data.event_id;
      await target.waitFor((got) => got.length === 1);
      const [request] = target.received;
      expect(request.headers['webhook-id']).toBe(eventId);
      expect(request.headers['content-type']).toBe('application/json');
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
      const payload = verified(created.secret, request);
      expect(payload).toEqual({
        type: 'webhook.test',
        timestamp: expect.any(String),
        data: { webhook_id: created.id },
      });
      // A signature made with another secret fails.
      expect(() =>
        new Webhook(`whsec_${Buffer.alloc(24).toString('base64')}`).verify(
          request.body,
          request.headers as any,
        ),
      ).toThrow();

      const [delivery] = await eventually(async () => {
        const log = await deliveries(created.id);
        return log.length === 1 ? log : undefined;
      });
      expect(delivery).toEqual({
        id: expect.any(Number),
        event_id: eventId,
        event_type: 'webhook.test',
        attempt: 1,
        at: expect.any(String),
        outcome: 'delivered',
        status_code: 200,
        error: null,
        duration_ms: expect.any(Number),
        response_excerpt: 'ok',
        next_retry_at: null,
      });
    });

    it("delivers the changes made through the API to the webhooks that take their type, with the feed's ids", async () => {
      const modules = await receiver();
      const everything = await receiver();
      const onModules = (await create({ url: modules.url, types: ['module.created'] })).body.data;
      const onAll = (await create({ url: everything.url, types: ['*'] })).body.data;
      const created = await api.post('/api/modules', {
        token: given.token,
        body: { code: 'WHK101', year: 2026, credits: 15 },
      });
      expect(created.status).toBe(201);
      const user = await api.post('/api/users', {
        token: given.token,
        body: { username: 'hooked', email: 'hooked@example.edu', password: 'correct-horse-battery' },
      });
      expect(user.status).toBe(201);
      await modules.waitFor((got) => got.length === 1);
      await everything.waitFor((got) => got.length === 2);
      const payload = verified(onModules.secret, modules.received[0]);
      expect(payload).toEqual({
        type: 'module.created',
        timestamp: expect.any(String),
        data: created.body.data,
      });
      const all = everything.received.map((request) => verified(onAll.secret, request));
      expect(all.map((event) => event.type).sort()).toEqual(['module.created', 'user.created']);
      expect(all.find((event) => event.type === 'user.created')!.data).toEqual(user.body.data);
      // The webhook-id is the event's id in GET /api/events.
      const feed = (await api.get('/api/events?types=module.created', { token: given.token })).body.data
        .events;
      const ids = new Set(feed.map((event: { id: string }) => event.id));
      expect(ids.has(modules.received[0].headers['webhook-id'])).toBe(true);
      expect(modules.received[0].headers['webhook-id']).toBe(
        everything.received.find((request) => verified(onAll.secret, request).type === 'module.created')!
          .headers['webhook-id'],
      );
    });

    it('does not send events to a disabled webhook', async () => {
      const target = await receiver();
      const witness = await receiver();
      const off = (await create({ url: target.url, types: ['*'] })).body.data;
      await api.put(`/api/webhooks/${off.id}`, { token: given.token, body: { enabled: false } });
      await create({ url: witness.url, types: ['*'] });
      await api.post('/api/modules', {
        token: given.token,
        body: { code: 'WHK102', year: 2026, credits: 15 },
      });
      // The witness got the event, so the dispatcher has passed it.
      await witness.waitFor((got) => got.length === 1);
      expect(target.received).toHaveLength(0);
    });

    it('passes over events no enabled webhook takes, and never sends them to a webhook made later', async () => {
      /** The dispatcher's position, and the newest event's, as `txid.id`. */
      const position = async () =>
        (
          await app.dataSource.query(
            `SELECT (SELECT last_txid || '.' || last_event_id FROM webhook_dispatch) AS dispatched,
                    (SELECT txid || '.' || id FROM change_events ORDER BY txid DESC, id DESC LIMIT 1) AS newest`,
          )
        )[0] as { dispatched: string | null; newest: string | null };
      const passed = () =>
        eventually(async () => {
          const now = await position();
          return now.newest !== null && now.dispatched === now.newest ? now : undefined;
        });

      const target = await receiver();
      const usersOnly = (await create({ url: target.url, types: ['user.created'] })).body.data;
      const off = (await create({ url: target.url, types: ['*'] })).body.data;
      await api.put(`/api/webhooks/${off.id}`, { token: given.token, body: { enabled: false } });
      expect(
        (
          await api.post('/api/modules', {
            token: given.token,
            body: { code: 'WHK103', year: 2026, credits: 15 },
          })
        ).status,
      ).toBe(201);
      // The module's event is passed over although a webhook (disabled) would take it.
      await passed();
      expect(target.received).toHaveLength(0);

      // A webhook made now starts after what was passed over: it gets the next event, not the module's.
      const later = await receiver();
      const onAll = (await create({ url: later.url, types: ['*'] })).body.data;
      const user = await api.post('/api/users', {
        token: given.token,
        body: { username: 'passed', email: 'passed@example.edu', password: 'correct-horse-battery' },
      });
      expect(user.status).toBe(201);
      await later.waitFor((got) => got.length === 1);
      await target.waitFor((got) => got.length === 1);
      await passed();
      expect(later.received.map((request) => verified(onAll.secret, request).type)).toEqual(['user.created']);
      expect(verified(usersOnly.secret, target.received[0]).data).toEqual(user.body.data);
    });

    it('retries a receiver that fails 3 times: it gets the event once more and the log shows 4 attempts', async () => {
      const target = await receiver((n) => (n < 3 ? 503 : 200));
      const created = (await create({ url: target.url, types: ['*'] })).body.data;
      const eventId = (await api.post(`/api/webhooks/${created.id}/test`, { token: given.token })).body.data
        .event_id;
      await target.waitFor((got) => got.length === 4);
      const log = await eventually(async () => {
        const rows = await deliveries(created.id);
        return rows.length === 4 ? rows : undefined;
      });
      expect(log.map((row) => [row.attempt, row.outcome, row.status_code])).toEqual([
        [4, 'delivered', 200],
        [3, 'retrying', 503],
        [2, 'retrying', 503],
        [1, 'retrying', 503],
      ]);
      expect(log.every((row) => row.event_id === eventId)).toBe(true);
      expect(log.slice(1).every((row) => row.next_retry_at !== null)).toBe(true);
      // Every attempt carries the same webhook-id, each signed afresh.
      expect(new Set(target.received.map((request) => request.headers['webhook-id']))).toEqual(
        new Set([eventId]),
      );
      for (const request of target.received) verified(created.secret, request);
      // The success ended the failure streak.
      expect(
        (await api.get(`/api/webhooks/${created.id}`, { token: given.token })).body.data.failing_since,
      ).toBeNull();
      // Nothing more arrives: the delivered event is not sent again.
      expect(target.received).toHaveLength(4);
    });

    it('records a receiver that never answers as a timeout and retries it', async () => {
      const target = await receiver((n) => (n === 0 ? 'hang' : 200));
      const created = (await create({ url: target.url, types: ['*'] })).body.data;
      await api.post(`/api/webhooks/${created.id}/test`, { token: given.token });
      await target.waitFor((got) => got.length === 2);
      const log = await eventually(async () => {
        const rows = await deliveries(created.id);
        return rows.length === 2 ? rows : undefined;
      });
      expect(log[1]).toMatchObject({
        attempt: 1,
        outcome: 'retrying',
        status_code: null,
        error: 'No answer within 1000 ms',
      });
      expect(log[1].duration_ms).toBeGreaterThanOrEqual(990);
      expect(log[0]).toMatchObject({ attempt: 2, outcome: 'delivered', status_code: 200 });
    });

    it('keeps only an excerpt of a long answer and does not follow a redirect', async () => {
      const http = await import('node:http');
      const server = http.createServer((_request, response) => {
        response.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' }).end('x'.repeat(100_000));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const port = (server.address() as { port: number }).port;
        const created = (await create({ url: `http://127.0.0.1:${port}/hook`, types: ['*'] })).body.data;
        await api.put(`/api/webhooks/${created.id}`, { token: given.token, body: { types: ['*'] } });
        await api.post(`/api/webhooks/${created.id}/test`, { token: given.token });
        const [first] = await eventually(async () => {
          const rows = await deliveries(created.id);
          return rows.length >= 1 ? rows.slice(-1) : undefined;
        });
        expect(first).toMatchObject({ attempt: 1, outcome: 'retrying', status_code: 302 });
        expect(first.response_excerpt).toBe('x'.repeat(200));
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it("counts deliveries by outcome and reports the oldest undelivered event's age", async () => {
      const metrics = app.service.app.get(Metrics);
      const count = async (outcome: string) =>
        (await metrics.registry.getSingleMetric('webhook_deliveries_total')!.get()).values
          .filter((value) => value.labels.outcome === outcome)
          .reduce((sum, value) => sum + value.value, 0);
      const age = async () =>
        (await metrics.registry.getSingleMetric('webhook_oldest_undelivered_event_age_seconds')!.get())
          .values[0].value;
      const before = { delivered: await count('delivered'), retrying: await count('retrying') };
      const target = await receiver((n) => (n === 0 ? 500 : 200));
      const created = (await create({ url: target.url, types: ['*'] })).body.data;
      // A second webhook whose receiver hangs keeps an event undelivered while the age is read.
      const stuck = await receiver(() => 'hang');
      const slow = (await create({ url: stuck.url, types: ['*'] })).body.data;
      await api.post(`/api/webhooks/${slow.id}/test`, { token: given.token });
      await stuck.waitFor((got) => got.length === 1);
      expect(await age()).toBeGreaterThan(0);
      await api.post(`/api/webhooks/${created.id}/test`, { token: given.token });
      await target.waitFor((got) => got.length === 2);
      await eventually(async () => ((await count('delivered')) > before.delivered ? true : undefined));
      expect(await count('retrying')).toBeGreaterThan(before.retrying);
    });

    it('prunes delivery attempts older than EVENT_RETENTION_DAYS', async () => {
      const { id } = (await create({ url: 'http://127.0.0.1:9/a', types: ['*'] })).body.data;
      await app.dataSource.query(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, attempt, at, outcome, duration_ms)
         VALUES ($1, 'old', 'module.created', 1, now() - interval '31 days', 'delivered', 5),
                ($1, 'new', 'module.created', 1, now() - interval '29 days', 'delivered', 5)`,
        [id],
      );
      expect(app.config.eventRetentionDays).toBe(30);
      expect(await app.service.app.get(WebhookDeliverer).prune()).toBe(1);
      expect((await deliveries(id)).map((row) => row.event_id)).toEqual(['new']);
    });

    it('prunes delivery jobs, archived ones too, whose event is older than EVENT_RETENTION_DAYS', async () => {
      const { id } = (await create({ url: 'http://127.0.0.1:9/a', types: ['*'] })).body.data;
      const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
      const job = (eventId: string, days: number) => ({
        webhookId: String(id),
        event: { id: eventId, type: 'user.created', at: daysAgo(days), data: { email: 'ann@example.edu' } },
        attempt: 2,
        firstAt: daysAgo(days),
      });
      // Not due for an hour: no replica takes them while the test looks.
      const later = new Date(Date.now() + 3_600_000);
      await app.service.app
        .get(Transactions)
        .run((transaction) =>
          app.service.app
            .get(DeliveryQueue)
            .enqueue([job('old-job', 31), job('old-archived', 31), job('new-job', 29)], later, transaction),
        );
      // One of the old jobs done and archived, as pg-boss's maintenance leaves a job (kept 7 days there).
      const columns = `id, name, priority, data, state, retry_limit, retry_count, retry_delay, retry_backoff,
        start_after, started_on, singleton_key, singleton_on, expire_in, created_on, completed_on, keep_until,
        dead_letter, policy, output`;
      await app.dataSource.query(
        `WITH done AS (
           DELETE FROM pgboss.job WHERE name = 'webhook-delivery' AND data->'event'->>'id' = 'old-archived'
           RETURNING *
         )
         INSERT INTO pgboss.archive (${columns}) SELECT ${columns} FROM done`,
      );
      await app.service.app.get(WebhookDeliverer).prune();
      const left = await app.dataSource.query<{ id: string }[]>(
        `SELECT data->'event'->>'id' AS id FROM pgboss.job WHERE data->>'webhookId' = $1
         UNION ALL SELECT data->'event'->>'id' FROM pgboss.archive WHERE data->>'webhookId' = $1`,
        [String(id)],
      );
      expect(left.map((row) => row.id)).toEqual(['new-job']);
    });

    it('disables a webhook whose deliveries keep failing for the whole window, with an audit event', async () => {
      const target = await receiver(() => 500);
      const created = (await create({ url: `${target.url}?token=s3cr3t`, types: ['*'] })).body.data;
      // The failure streak began more than 3 days ago (scaled: about 26 s); one more failure disables it.
      await app.dataSource.query(
        `UPDATE webhooks SET failing_since = now() - interval '1 hour' WHERE id = $1`,
        [created.id],
      );
      await api.post(`/api/webhooks/${created.id}/test`, { token: given.token });
      const disabled = await eventually(async () => {
        const res = await api.get(`/api/webhooks/${created.id}`, { token: given.token });
        return res.body.data.enabled === false ? res.body.data : undefined;
      });
      expect(disabled.failing_since).not.toBeNull();
      const [event] = (await api.get('/api/audit?action=webhook.disable', { token: given.token })).body.data
        .events;
      expect(event).toMatchObject({
        actor_id: null,
        target_type: 'webhook',
        target_ids: [created.id],
        summary: { url: target.url, types: ['*'], enabled: false },
      });
    });
  });
}
