import { type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type DataSource } from 'typeorm';
import { Metrics } from '../src/observability/metrics.js';
import { CHANGE_EVENTS_CHANNEL } from '../src/events/change-events.repository.js';
import { loadConfig } from '../src/config/app-config.js';
import { jobExpirySeconds } from '../src/webhooks/delivery-queue.js';
import { startTestApp, TEST_JWT_SECRET, type TestApp, testDatabaseUrl } from './support/app.js';
import { makeUser, tokenFor } from './support/factories.js';
import { request } from './support/http.js';
import { type ServiceProcess, serviceEnv, startServiceProcess } from './support/processes.js';
import { eventually, type Received, startReceiver, verified } from './support/webhook-receiver.js';

/**
 * Webhook delivery on several replicas of the service sharing one database: no event lost, none enqueued twice,
 * each attempt made once; and a replica killed with SIGKILL in the middle of a burst loses nothing.
 */
const WEBHOOKS = { allowHttp: true, allowPrivate: true, timeoutMs: 1000, retryScale: 0.00001 };

/**
 * Writes `count` change events straight into the outbox, `perTransaction` to a transaction, with the
 * notification the outbox's writers send (ChangeEventsRepository.append).
 */
async function writeEvents(dataSource: DataSource, tag: string, count: number, perTransaction: number) {
  for (let start = 0; start < count; start += perTransaction) {
    const size = Math.min(perTransaction, count - start);
    await dataSource.query(
      `WITH written AS (
         INSERT INTO change_events (type, data)
         SELECT 'module.updated', jsonb_build_object('tag', $1::text, 'n', g) FROM generate_series($2::int, $3::int) g
         RETURNING 1
       )
       SELECT pg_notify('${CHANGE_EVENTS_CHANNEL}', '') FROM (SELECT 1) one WHERE EXISTS (SELECT 1 FROM written)`,
      [tag, start, start + size - 1],
    );
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

const delivered = async (metrics: Metrics) =>
  (await metrics.registry.getSingleMetric('webhook_deliveries_total')!.get()).values
    .filter((value) => value.labels.outcome === 'delivered')
    .reduce((sum, value) => sum + value.value, 0);

describe('webhook delivery on two replicas', () => {
  // A generous attempt timeout: on a loaded machine a 1 s one would time out answers that did come.
  const settings = { ...WEBHOOKS, timeoutMs: 5000 };
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    [first, second] = await Promise.all([
      startTestApp({ webhooks: settings, backgroundWorkers: true }),
      startTestApp({ webhooks: settings, backgroundWorkers: true }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
  });

  it('delivers 1 000 events exactly once each, shared between the replicas, and reports the figures', async () => {
    await first.reset();
    const token = tokenFor(await makeUser(first.dataSource, { admin: true }));
    const target = await startReceiver();
    try {
      const created = await request(first.url, 'POST', '/api/webhooks', {
        token,
        body: { url: target.url, types: ['module.updated'] },
      });
      expect(created.status).toBe(201);
      const before =
        (await delivered(first.service.app.get(Metrics))) +
        (await delivered(second.service.app.get(Metrics)));
      const started = Date.now();
      await writeEvents(first.dataSource, 'replicas', 1000, 100);
      // Every event delivered, as the log shows (the receiver can answer before an attempt's transaction commits).
      const counted = await eventually(async () => {
        const [row] = await first.dataSource.query<
          { attempts: number; attempt_ids: number; delivered: number }[]
        >(
          `SELECT count(*)::int AS attempts, count(DISTINCT (event_id, attempt))::int AS attempt_ids,
                  count(DISTINCT event_id) FILTER (WHERE outcome = 'delivered')::int AS delivered
           FROM webhook_deliveries WHERE webhook_id = $1`,
          [created.body.data.id],
        );
        return row.delivered >= 1000 ? row : undefined;
      }, 30_000);
      const tookMs = Date.now() - started;
      expect(counted.delivered).toBe(1000);
      // Each attempt was made once: one request per recorded attempt (a timeout under load is an attempt too).
      expect(counted.attempt_ids).toBe(counted.attempts);
      expect(target.received).toHaveLength(counted.attempts);
      const ids = target.received.map((got) => String(got.headers['webhook-id']));
      expect(new Set(ids).size).toBe(1000);
      const payloads = target.received.map((got) => verified(created.body.data.secret, got));
      expect(new Set(payloads.map((payload) => payload.data.n))).toEqual(
        new Set(Array.from({ length: 1000 }, (_, n) => n)),
      );
      // Both replicas took part.
      const [a, b] = await Promise.all([
        delivered(first.service.app.get(Metrics)),
        delivered(second.service.app.get(Metrics)),
      ]);
      expect(a + b - before).toBe(1000);

      const firstArrival = new Map<string, Received>();
      for (const got of target.received) {
        const id = String(got.headers['webhook-id']);
        if (!firstArrival.has(id)) firstArrival.set(id, got);
      }
      const latencies = [...firstArrival.values()]
        .map((got) => got.at - new Date(JSON.parse(got.body).timestamp).getTime())
        .sort((x, y) => x - y);
      console.log(
        `webhooks: 1000 events delivered by two replicas in ${tookMs} ms (${Math.round(1000 / (tookMs / 1000))} events/s); ` +
          `latency from commit p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms; ` +
          `${counted.attempts - 1000} retried attempts; replica shares ${a} / ${b}`,
      );
      // One event at a time: the time from its commit to its arrival, with nothing queued before it.
      const single: number[] = [];
      for (let n = 0; n < 20; n++) {
        const committed = Date.now();
        await writeEvents(first.dataSource, `single-${n}`, 1, 1);
        await target.waitFor((got) => got.some((one) => JSON.parse(one.body).data.tag === `single-${n}`));
        single.push(target.received.at(-1)!.at - committed);
      }
      single.sort((x, y) => x - y);
      console.log(
        `webhooks: single events, commit to arrival p50 ${percentile(single, 50)} ms, p99 ${percentile(single, 99)} ms`,
      );
    } finally {
      await target.close();
    }
  });
});

describe('a replica killed with SIGKILL in the middle of a delivery burst', () => {
  let dataDir: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-webhook-kill-'));
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  /** A replica's settings: the service's defaults but for the loopback receiver and a 1 s attempt timeout. */
  function childEnv(): NodeJS.ProcessEnv {
    return serviceEnv({
      DATABASE_URL: testDatabaseUrl(),
      JWT_SECRET: TEST_JWT_SECRET,
      DATA_DIR: dataDir,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_TIMEOUT_MS: '1000',
    });
  }

  /**
   * How long after the kill the jobs the killed replica held may take to reach the other: a job expires
   * jobExpirySeconds after it was taken (the attempt's deadline and its recording's bound), and pg-boss's
   * maintenance, run every expiry period (up to 60 s), hands it on: two periods, and 10 s for the attempt.
   */
  const handOverMs = () => (2 * jobExpirySeconds(loadConfig(childEnv())) + 10) * 1000;

  /** The service as its own process on the test database, as a replica runs it. */
  async function startChild(): Promise<ServiceProcess> {
    const started = await startServiceProcess(childEnv());
    children.push(started.child);
    return started;
  }

  it('leaves its deliveries to the restarted service: every event arrives, each attempt is recorded once', async () => {
    const bound = handOverMs();
    const fixtures = await startTestApp({ webhooks: WEBHOOKS });
    let token: string;
    try {
      await fixtures.reset();
      token = tokenFor(await makeUser(fixtures.dataSource, { admin: true }));
    } finally {
      // Only the child processes deliver in this test.
      await fixtures.close();
    }
    const target = await startReceiver();
    const pg = await import('pg');
    const db = new pg.default.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    try {
      const first = await startChild();
      const created = await request(first.url, 'POST', '/api/webhooks', {
        token,
        body: { url: target.url, types: ['module.updated'] },
      });
      expect(created.status).toBe(201);
      const webhookId = created.body.data.id;
      const total = 300;
      await db.query(
        `WITH written AS (
           INSERT INTO change_events (type, data)
           SELECT 'module.updated', jsonb_build_object('tag', 'kill', 'n', g) FROM generate_series(0, $1::int - 1) g
           RETURNING 1
         )
         SELECT pg_notify('${CHANGE_EVENTS_CHANNEL}', '') FROM (SELECT 1) one WHERE EXISTS (SELECT 1 FROM written)`,
        [total],
      );
      // Killed once some attempts are recorded and others are surely in flight.
      await eventually(async () => {
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`,
          [webhookId],
        );
        return rows[0].n >= 60 ? true : undefined;
      }, 30_000);
      first.child.kill('SIGKILL');
      await first.exited;
      const atKill = new Set(target.received.map((got) => String(got.headers['webhook-id']))).size;
      expect(atKill).toBeLessThan(total);

      const second = await startChild();
      await target.waitFor(
        (got) => new Set(got.map((one) => one.headers['webhook-id'])).size >= total,
        bound,
      );
      const ids = target.received.map((got) => String(got.headers['webhook-id']));
      expect(new Set(ids).size).toBe(total);
      // At least once: only attempts cut off by the kill may arrive twice.
      const duplicates = ids.length - total;
      expect(duplicates).toBeLessThanOrEqual(50);
      const rows = await eventually(async () => {
        const { rows: counted } = await db.query<{ attempts: number; events: number }>(
          `SELECT count(*)::int AS attempts, count(DISTINCT event_id)::int AS events
           FROM webhook_deliveries WHERE webhook_id = $1 AND outcome = 'delivered'`,
          [webhookId],
        );
        // An attempt the killed replica made but never recorded is recorded once its job is handed on.
        return counted[0].events === total ? counted[0] : undefined;
      }, bound);
      // One recorded attempt per event: the unique (webhook, event, attempt) row is never written twice.
      expect(rows).toEqual({ attempts: total, events: total });
      console.log(
        `webhooks: SIGKILL after ${atKill}/${total} events; after the restart all ${total} arrived, ${duplicates} twice`,
      );
      second.child.kill('SIGTERM');
      await second.exited;
    } finally {
      await db.end();
      await target.close();
    }
  }, 240_000);
});
