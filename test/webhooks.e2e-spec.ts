// Webhooks: the routes, deliveries, URL rules, the delivery log's retention, the circuit breaker, receivers isolated, DNS.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import { jest } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { Transactions } from '../src/database/transactions.js';
import { CHANGE_EVENTS_CHANNEL } from '../src/events/change-events.repository.js';
import { Metrics } from '../src/observability/metrics.js';
import { DeliveryQueue } from '../src/webhooks/delivery-queue.js';
import { WebhookDeliverer } from '../src/webhooks/webhook-deliverer.js';
import { HostResolver } from '../src/webhooks/webhook-url.js';
import { useTestApp } from './support/app.js';
import { DEFAULT_PASSWORD, makeUser, tokenFor } from './support/factories.js';
import { waitFor } from './support/wait-for.js';
import { startDnsServer } from './support/webhook-dns.js';
import { eventually, startReceiver, verified } from './support/webhook-receiver.js';

const LOOPBACK = {
  backgroundWorkers: true,
  webhooks: { allowHttp: true, allowPrivate: true, timeoutMs: 1000, retryScale: 0.0001 },
};

describe('Webhooks (/api/webhooks)', () => {
  const { app, api } = useTestApp(LOOPBACK);
  let token: string;
  let receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];

  beforeEach(async () => {
    await app.reset();
    token = tokenFor(await makeUser(app.dataSource, { admin: true }));
  });
  afterEach(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    receivers = [];
  });

  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const started = await startReceiver(...args);
    receivers.push(started);
    return started;
  };
  const create = (body: unknown) => api.post('/api/webhooks', { token, body });
  const deliveries = async (id: number) =>
    (await api.get(`/api/webhooks/${id}/deliveries?per_page=100`, { token })).body.data.deliveries as any[];

  describe('management', () => {
    it('creates a webhook and shows its secret in that answer only', async () => {
      const res = await create({
        url: 'http://127.0.0.1:9/hook',
        types: ['module.created'],
        description: 'LMS',
      });
      expect(res.status).toBe(201);
      expect(res.body.message).toBe('Webhook created');
      const { secret, ...webhook } = res.body.data;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(24);
      expect(webhook).toEqual({
        id: expect.any(Number),
        url: 'http://127.0.0.1:9/hook',
        types: ['module.created'],
        description: 'LMS',
        enabled: true,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updated_at: expect.any(String),
        failing_since: null,
      });

      const read = await api.get(`/api/webhooks/${webhook.id}`, { token });
      expect(read.status).toBe(200);
      expect(read.body).toEqual({ success: true, data: webhook, message: 'Webhook retrieved successfully' });
      const list = await api.get('/api/webhooks', { token });
      expect(list.body.data).toEqual({ webhooks: [webhook], page: 1, per_page: 20, total: 1 });
      const updated = await api.put(`/api/webhooks/${webhook.id}`, { token, body: { description: null } });
      expect(updated.body.data.secret).toBeUndefined();
      // Neither the answers nor the audit trail ever carry the secret again.
      const audit = await api.get('/api/audit?target_type=webhook', { token });
      const everything = JSON.stringify([read.body, list.body, updated.body, audit.body]);
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice(6));
    });

    it('stores ["*"] alone for all types and drops repeated types', async () => {
      const all = await create({ url: 'http://127.0.0.1:9/a', types: ['module.created', '*'] });
      expect(all.body.data.types).toEqual(['*']);
      const some = await create({ url: 'http://127.0.0.1:9/b', types: ['user.deleted', 'user.deleted'] });
      expect(some.body.data.types).toEqual(['user.deleted']);
    });

    it.each([
      [{ types: ['*'] }, 'url must be an absolute http(s) URL of at most 2048 characters'],
      [{ url: 'not a url', types: ['*'] }, 'url must be an absolute http(s) URL of at most 2048 characters'],
      [{ url: 42, types: ['*'] }, 'url must be an absolute http(s) URL of at most 2048 characters'],
      [
        { url: `http://127.0.0.1/${'x'.repeat(2040)}`, types: ['*'] },
        'url must be an absolute http(s) URL of at most 2048 characters',
      ],
      // Another scheme, credentials, a control character anywhere: a URL that is not allowed.
      [{ url: 'ftp://example.edu/x', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'file:///etc/passwd', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'http://127.0.0.1/a\u0000b', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'http://127.0.0.1\u0000.evil/x', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'http://127.0.0.1/a\tb', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'http://127.0.0.1/a\u001bb', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'http://127.0.0.1/a\u0085b', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'http://user:secret@127.0.0.1/x', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'https://example.edu/x' }, 'types must be a non-empty array of at most 16 event types'],
      [
        { url: 'https://example.edu/x', types: [] },
        'types must be a non-empty array of at most 16 event types',
      ],
      [
        { url: 'https://example.edu/x', types: 'module.created' },
        'types must be a non-empty array of at most 16 event types',
      ],
      [{ url: 'https://example.edu/x', types: ['module.exploded'] }, 'Invalid event type'],
      [{ url: 'https://example.edu/x', types: ['webhook.test'] }, 'Invalid event type'],
      [
        { url: 'https://example.edu/x', types: ['*'], description: 'x'.repeat(501) },
        'description must be a string of at most 500 characters, or null',
      ],
      [{ url: 'https://example.edu/x', types: ['*'], secret: 'mine' }, 'property secret should not exist'],
    ])('refuses %j with 400 and creates nothing', async (body, message) => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message });
      expect((await api.get('/api/webhooks', { token })).body.data.total).toBe(0);
    });

    it('updates fields, clears failing_since when turned on again, and audits only what changed', async () => {
      const { id } = (await create({ url: 'http://127.0.0.1:9/a', types: ['*'] })).body.data;
      await app.dataSource.query(`UPDATE webhooks SET enabled = false, failing_since = now() WHERE id = $1`, [
        id,
      ]);
      const res = await api.put(`/api/webhooks/${id}`, {
        token,
        body: { enabled: true, types: ['user.created'], url: 'http://127.0.0.1:9/a' },
      });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Webhook updated successfully');
      expect(res.body.data).toMatchObject({ enabled: true, types: ['user.created'], failing_since: null });
      const [event] = (await api.get('/api/audit?action=webhook.update', { token })).body.data.events;
      expect(event.summary).toEqual({
        types: { from: ['*'], to: ['user.created'] },
        enabled: { from: false, to: true },
      });
      expect((await api.put(`/api/webhooks/${id}`, { token, body: {} })).body.message).toBe(
        'At least one field must be provided',
      );
      expect((await api.put(`/api/webhooks/${id}`, { token, body: { enabled: 'yes' } })).body.message).toBe(
        'enabled must be true or false',
      );
      expect((await api.put(`/api/webhooks/999999`, { token, body: { enabled: true } })).status).toBe(404);
    });

    it('deletes a webhook with its log and audits it; an unknown id is 404', async () => {
      const { id } = (await create({ url: 'http://127.0.0.1:9/a', types: ['*'] })).body.data;
      const res = await api.delete(`/api/webhooks/${id}`, { token });
      expect(res.body).toEqual({ success: true, data: null, message: 'Webhook deleted successfully' });
      expect((await api.get(`/api/webhooks/${id}`, { token })).body).toEqual({
        success: false,
        data: null,
        message: 'Webhook not found',
      });
      expect((await api.delete(`/api/webhooks/${id}`, { token })).status).toBe(404);
      const actions = (await api.get('/api/audit?target_type=webhook&sort=at', { token })).body.data.events;
      expect(actions.map((event: any) => [event.action, event.summary])).toEqual([
        ['webhook.create', { url: 'http://127.0.0.1:9/a', types: ['*'], enabled: true }],
        ['webhook.delete', { url: 'http://127.0.0.1:9/a', types: ['*'], enabled: true }],
      ]);
    });

    it('keeps webhook URLs in the audit trail without their query string (a token there is not kept a year)', async () => {
      const secretUrl = 'http://127.0.0.1:9/hook?token=s3cr3t&x=1#frag';
      const { id } = (await create({ url: secretUrl, types: ['*'] })).body.data;
      expect((await api.get(`/api/webhooks/${id}`, { token })).body.data.url).toBe(secretUrl);
      await api.put(`/api/webhooks/${id}`, { token, body: { url: 'http://127.0.0.1:9/other?key=k2' } });
      await api.delete(`/api/webhooks/${id}`, { token });
      const events = (await api.get('/api/audit?target_type=webhook&sort=at', { token })).body.data.events;
      expect(events.map((event: any) => [event.action, event.summary])).toEqual([
        ['webhook.create', { url: 'http://127.0.0.1:9/hook', types: ['*'], enabled: true }],
        ['webhook.update', { url: { from: 'http://127.0.0.1:9/hook', to: 'http://127.0.0.1:9/other' } }],
        ['webhook.delete', { url: 'http://127.0.0.1:9/other', types: ['*'], enabled: true }],
      ]);
      expect(JSON.stringify(events)).not.toMatch(/s3cr3t|k2/);
    });
  });

  describe('delivery', () => {
    it('delivers the test event signed with the Standard Webhooks scheme, verified by the package', async () => {
      const target = await receiver();
      const created = (await create({ url: target.url, types: ['module.created'] })).body.data;
      const res = await api.post(`/api/webhooks/${created.id}/test`, { token });
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
        token,
        body: { code: 'WHK101', year: 2026, credits: 15 },
      });
      expect(created.status).toBe(201);
      const user = await api.post('/api/users', {
        token,
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
      const feed = (await api.get('/api/events?types=module.created', { token })).body.data.events;
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
      await api.put(`/api/webhooks/${off.id}`, { token, body: { enabled: false } });
      await create({ url: witness.url, types: ['*'] });
      await api.post('/api/modules', { token, body: { code: 'WHK102', year: 2026, credits: 15 } });
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
      await api.put(`/api/webhooks/${off.id}`, { token, body: { enabled: false } });
      expect(
        (await api.post('/api/modules', { token, body: { code: 'WHK103', year: 2026, credits: 15 } })).status,
      ).toBe(201);
      // The module's event is passed over although a webhook (disabled) would take it.
      await passed();
      expect(target.received).toHaveLength(0);

      // A webhook made now starts after what was passed over: it gets the next event, not the module's.
      const later = await receiver();
      const onAll = (await create({ url: later.url, types: ['*'] })).body.data;
      const user = await api.post('/api/users', {
        token,
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
      const eventId = (await api.post(`/api/webhooks/${created.id}/test`, { token })).body.data.event_id;
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
      expect((await api.get(`/api/webhooks/${created.id}`, { token })).body.data.failing_since).toBeNull();
      // Nothing more arrives: the delivered event is not sent again.
      expect(target.received).toHaveLength(4);
    });

    it('records a receiver that never answers as a timeout and retries it', async () => {
      const target = await receiver((n) => (n === 0 ? 'hang' : 200));
      const created = (await create({ url: target.url, types: ['*'] })).body.data;
      await api.post(`/api/webhooks/${created.id}/test`, { token });
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
        await api.put(`/api/webhooks/${created.id}`, { token, body: { types: ['*'] } });
        await api.post(`/api/webhooks/${created.id}/test`, { token });
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
      await api.post(`/api/webhooks/${slow.id}/test`, { token });
      await stuck.waitFor((got) => got.length === 1);
      expect(await age()).toBeGreaterThan(0);
      await api.post(`/api/webhooks/${created.id}/test`, { token });
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
      await api.post(`/api/webhooks/${created.id}/test`, { token });
      const disabled = await eventually(async () => {
        const res = await api.get(`/api/webhooks/${created.id}`, { token });
        return res.body.data.enabled === false ? res.body.data : undefined;
      });
      expect(disabled.failing_since).not.toBeNull();
      const [event] = (await api.get('/api/audit?action=webhook.disable', { token })).body.data.events;
      expect(event).toMatchObject({
        actor_id: null,
        target_type: 'webhook',
        target_ids: [created.id],
        summary: { url: target.url, types: ['*'], enabled: false },
      });
    });
  });
});

describe('Webhook URL rules in production mode', () => {
  const { app, api } = useTestApp({
    backgroundWorkers: true,
    webhooks: { allowHttp: false, allowPrivate: false, timeoutMs: 1000, retryScale: 0.0001 },
  });
  let token: string;

  beforeEach(async () => {
    await app.reset();
    token = tokenFor(await makeUser(app.dataSource, { admin: true }));
  });
  afterEach(() => jest.restoreAllMocks());

  const create = (url: string) => api.post('/api/webhooks', { token, body: { url, types: ['*'] } });

  it.each([
    'http://93.184.216.34/hook',
    'https://localhost/hook',
    'https://127.0.0.1/hook',
    'https://0.0.0.0/hook',
    'https://10.0.0.5/hook',
    'https://172.20.1.1/hook',
    'https://192.168.0.10/hook',
    'https://100.64.1.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:a9fe:a9fe]/hook',
    'https://[::ffff:0:127.0.0.1]/hook',
    'https://[::ffff:0:a9fe:a9fe]/hook',
    'https://[64:ff9b::a9fe:a9fe]/hook',
    'https://[64:ff9b:1::a9fe:a9fe]/hook',
    'https://[64:ff9b:1:a9fe:a9:fe00::]/hook',
    'https://[fd00::1]/hook',
    'https://[fe80::1]/hook',
    'https://224.0.0.1/hook',
    'https://user:pass@93.184.216.34/hook',
  ])('refuses %s with 400 Webhook URL is not allowed', async (url) => {
    const res = await create(url);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, data: null, message: 'Webhook URL is not allowed' });
  });

  it('refuses a host name that resolves to a private address, on create and on update', async () => {
    const resolver = app.service.app.get(HostResolver);
    jest.spyOn(resolver, 'resolve').mockImplementation((host) =>
      Promise.resolve(
        host === 'intranet.example.edu'
          ? [
              { address: '93.184.216.34', family: 4 },
              { address: '10.1.2.3', family: 4 },
            ]
          : [{ address: '93.184.216.34', family: 4 }],
      ),
    );
    expect((await create('https://intranet.example.edu/hook')).body.message).toBe(
      'Webhook URL is not allowed',
    );
    const ok = await create('https://public.example.edu/hook');
    expect(ok.status).toBe(201);
    const res = await api.put(`/api/webhooks/${ok.body.data.id}`, {
      token,
      body: { url: 'https://intranet.example.edu/hook' },
    });
    expect(res.body.message).toBe('Webhook URL is not allowed');
    expect((await api.get(`/api/webhooks/${ok.body.data.id}`, { token })).body.data.url).toBe(
      'https://public.example.edu/hook',
    );
  });

  it('checks the address again at delivery: a host that resolved public at create and private now is not contacted', async () => {
    const target = await startReceiver();
    try {
      const resolver = app.service.app.get(HostResolver);
      const lookup = jest
        .spyOn(resolver, 'resolve')
        .mockResolvedValueOnce([{ address: '93.184.216.34', family: 4 }])
        .mockResolvedValue([{ address: '127.0.0.1', family: 4 }]);
      const created = await create(`https://rebind.example.edu:${target.port}/hook`);
      expect(created.status).toBe(201);
      await api.post(`/api/webhooks/${created.body.data.id}/test`, { token });
      const rows = await eventually(async () => {
        const found = (await api.get(`/api/webhooks/${created.body.data.id}/deliveries`, { token })).body.data
          .deliveries;
        return found.length > 0 ? (found as any[]) : undefined;
      });
      expect(rows.at(-1)).toMatchObject({
        attempt: 1,
        status_code: null,
        error: 'Webhook URL is not allowed',
      });
      expect(rows.every((row) => row.error === 'Webhook URL is not allowed')).toBe(true);
      expect(lookup.mock.calls.every(([host]) => host === 'rebind.example.edu')).toBe(true);
      expect(lookup.mock.calls.length).toBeGreaterThanOrEqual(2);
      expect(target.received).toHaveLength(0);
    } finally {
      await target.close();
    }
  });
});

describe('Webhook delivery log retention with a short interactive bound', () => {
  // Every interactive statement must end within 300 ms; the prune works under the long bound, in batches.
  const { app, api } = useTestApp({ ...LOOPBACK, dbStatementTimeoutMs: 300, dbQueryTimeoutMs: 2000 });

  it('prunes a large backlog of old attempts batch by batch, keeping the recent ones', async () => {
    await app.reset();
    const token = tokenFor(await makeUser(app.dataSource, { admin: true }));
    const { id } = (
      await api.post('/api/webhooks', { token, body: { url: 'http://127.0.0.1:9/a', types: ['*'] } })
    ).body.data;
    const old = 250_000;
    await app.service.app.get(Transactions).runLong(async (transaction) => {
      await transaction.query(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, attempt, at, outcome, duration_ms)
         SELECT $1, 'old-' || g, 'module.created', 1, now() - interval '40 days', 'delivered', 5
         FROM generate_series(1, $2::int) g`,
        [id, old],
      );
      await transaction.query(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, attempt, at, outcome, duration_ms)
         VALUES ($1, 'new', 'module.created', 1, now() - interval '1 day', 'delivered', 5)`,
        [id],
      );
    });
    expect(await app.service.app.get(WebhookDeliverer).prune()).toBe(old);
    const [left] = await app.dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`,
      [id],
    );
    expect(left.n).toBe(1);
  });
});

describe('Webhook circuit breaker', () => {
  // Scaled by 0.01: the pause after 24 hours of failures is 864 s, a probe round every 15 minutes is 9 s.
  const { app, api } = useTestApp({ ...LOOPBACK, webhooks: { ...LOOPBACK.webhooks, retryScale: 0.01 } });

  it('holds a webhook failing for 24 hours until its next probe round, and a delivered probe ends the pause', async () => {
    await app.reset();
    const token = tokenFor(await makeUser(app.dataSource, { admin: true }));
    const pausedTarget = await startReceiver();
    const failingTarget = await startReceiver();
    try {
      const paused = (
        await api.post('/api/webhooks', { token, body: { url: pausedTarget.url, types: ['*'] } })
      ).body.data;
      await api.post('/api/webhooks', { token, body: { url: failingTarget.url, types: ['*'] } });
      // One failing for a (scaled) day and a half, its last attempt just now; the other for a minute only.
      await app.dataSource.query(
        `UPDATE webhooks SET failing_since = now() - CASE WHEN id = $1 THEN interval '1300 seconds'
                                                          ELSE interval '60 seconds' END`,
        [paused.id],
      );
      await app.dataSource.query(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, attempt, at, outcome, status_code, duration_ms)
         VALUES ($1, 'earlier', 'module.created', 1, now(), 'retrying', 500, 5)`,
        [paused.id],
      );
      const user = await api.post('/api/users', {
        token,
        body: { username: 'breaker.case', email: 'breaker@example.edu', password: 'a-long-password-1' },
      });
      expect(user.status).toBe(201);
      // The webhook failing for a minute only is not paused: it gets the event at once.
      await failingTarget.waitFor((got) => got.length === 1);
      // The paused one's job waits for the probe round (put back, not sent, not recorded)...
      const [held] = await waitFor(
        () =>
          app.dataSource
            .query<{ start_after: Date }[]>(
              `SELECT start_after FROM pgboss.job WHERE name = 'webhook-delivery' AND state = 'created'
               AND data->>'webhookId' = $1`,
              [String(paused.id)],
            )
            .then((rows) => (rows.length === 1 ? rows : undefined)),
        { what: "the paused webhook's job put back" },
      );
      expect(held.start_after.getTime()).toBeGreaterThan(Date.now() + 5000);
      expect(pausedTarget.received).toHaveLength(0);
      expect((await api.get(`/api/webhooks/${paused.id}/deliveries`, { token })).body.data.total).toBe(1);
      // ...and is sent then; delivered, it ends the pause.
      await pausedTarget.waitFor((got) => got.length === 1, 20_000);
      const after = await eventually(async () => {
        const res = await api.get(`/api/webhooks/${paused.id}`, { token });
        return res.body.data.failing_since === null ? res.body.data : undefined;
      });
      expect(after.enabled).toBe(true);
    } finally {
      await pausedTarget.close();
      await failingTarget.close();
    }
  });
});

/**
 * Receivers are isolated: with one receiver that never answers and one that trickles a 5 MiB answer, a
 * healthy receiver still gets each event once, p95 within 3 s of the commit (the contract's bound), with the
 * attempt's real 10 s deadline. The figures go to docs/webhooks.md.
 */
const EVENTS = 20;
/** The writes' pace: a steady stream, as changes come, not one burst. */
const WRITE_GAP_MS = 250;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

describe('webhook receivers are isolated', () => {
  const { app, api } = useTestApp({
    backgroundWorkers: true,
    webhooks: { allowHttp: true, allowPrivate: true, timeoutMs: 10_000, retryScale: 0.0001 },
  });
  const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  it('delivers to a healthy receiver promptly, each event once, beside a hung and a trickling receiver', async () => {
    await app.reset();
    const token = tokenFor(await makeUser(app.dataSource, { admin: true }));
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
});

/**
 * Webhook host names are resolved off libuv's thread pool (c-ares), under the attempt's one deadline: a
 * receiver whose DNS never answers neither holds logins back (argon2 runs on that pool) nor makes an attempt
 * outlast WEBHOOK_TIMEOUT_MS. The DNS server is one of the test's own, on loopback.
 */
const TIMEOUT_MS = 2000;

describe('webhook DNS', () => {
  const { app, api } = useTestApp({
    backgroundWorkers: true,
    webhooks: { allowHttp: true, allowPrivate: true, timeoutMs: TIMEOUT_MS, retryScale: 0.0001 },
  });
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
});
