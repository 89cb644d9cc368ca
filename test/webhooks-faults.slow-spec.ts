import { type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { CHANGE_EVENTS_CHANNEL } from '../src/events/change-events.repository.js';
import { scratchDatabase, TEST_JWT_SECRET } from './support/app.js';
import { type Database, makeUser, tokenFor } from './support/factories.js';
import { request } from './support/http.js';
import { serviceEnv, startServiceProcess } from './support/processes.js';
import { eventually, startReceiver } from './support/webhook-receiver.js';
import { waitFor } from './support/wait-for.js';

/** A pg client as the factories' Database (their `query` answers the rows). */
const asDatabase = (client: pg.Client): Database =>
  ({
    query: (sql: string, params?: unknown[]) => client.query(sql, params).then((r) => r.rows),
  }) as unknown as Database;

/**
 * Nothing a receiver answers, and no failure of the background work (dispatch, the job queue, recording,
 * pruning, lost connections), may end the process: the service runs as its own process here, so an unhandled
 * rejection would end it as it ends a replica.
 */
describe('webhook delivery under faults (the service as its own process)', () => {
  let database: Awaited<ReturnType<typeof scratchDatabase>>;
  let db: pg.Client;
  let dataDir: string;
  const children: ChildProcess[] = [];
  const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];

  beforeAll(async () => {
    database = await scratchDatabase('webhook_faults');
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-webhook-faults-'));
    // A first start applies the migrations.
    const first = await startChild();
    first.child.kill('SIGTERM');
    await first.exited;
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await db?.end();
    await rm(dataDir, { recursive: true, force: true });
  });

  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const started = await startReceiver(...args);
    receivers.push(started);
    return started;
  };

  async function startChild() {
    const started = await startServiceProcess(
      serviceEnv({
        DATABASE_URL: database.url,
        JWT_SECRET: TEST_JWT_SECRET,
        DATA_DIR: dataDir,
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_RETRY_SCALE: '0.0001',
      }),
    );
    children.push(started.child);
    return started;
  }

  const writeEvents = (tag: string, count: number) =>
    db.query(
      `WITH written AS (
         INSERT INTO change_events (type, data)
         SELECT 'module.updated', jsonb_build_object('tag', $1::text, 'n', g) FROM generate_series(1, $2::int) g
         RETURNING 1
       )
       SELECT pg_notify('${CHANGE_EVENTS_CHANNEL}', '') FROM (SELECT 1) one WHERE EXISTS (SELECT 1 FROM written)`,
      [tag, count],
    );

  const tagsOf = (received: { body: string }[], tag: string) =>
    new Set(
      received
        .map((got) => JSON.parse(got.body) as { data: { tag: string; n: number } })
        .filter((payload) => payload.data.tag === tag)
        .map((payload) => payload.data.n),
    );

  it('lives through receivers answering NUL, UTF-16, gzip and invalid UTF-8, records them, and a healthy receiver gets every event', async () => {
    const service = await startChild();
    const token = tokenFor(await makeUser(asDatabase(db), { admin: true }));
    const utf16 = await receiver(
      () => (response) =>
        response.writeHead(200, { 'content-type': 'text/plain; charset=utf-16le' }).end('O\0K\0'),
    );
    const gzip = await receiver(
      () => (response) =>
        response
          .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
          .end(gzipSync('ok')),
    );
    const binary = await receiver(
      () => (response) =>
        response.writeHead(200).end(Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x00])),
    );
    const healthy = await receiver();
    const ids: Record<string, number> = {};
    for (const [name, target] of Object.entries({ utf16, gzip, binary, healthy })) {
      const created = await request(service.url, 'POST', '/api/webhooks', {
        token,
        body: { url: target.url, types: ['module.updated'] },
      });
      expect(created.status).toBe(201);
      ids[name] = created.body.data.id;
    }
    await writeEvents('bytes', 5);
    await healthy.waitFor((got) => tagsOf(got, 'bytes').size === 5, 30_000);
    // Every attempt of every webhook is recorded as delivered, its excerpt stored as safe text.
    const rows = await eventually(async () => {
      const { rows: found } = await db.query<{
        webhook_id: string;
        outcome: string;
        response_excerpt: string | null;
      }>(`SELECT webhook_id::text, outcome, response_excerpt FROM webhook_deliveries`);
      return found.filter((row) => row.outcome === 'delivered').length === 20 ? found : undefined;
    }, 30_000);
    expect(rows).toHaveLength(20);
    const excerpt = (name: string) =>
      rows.find((row) => row.webhook_id === String(ids[name]))?.response_excerpt;
    expect(excerpt('utf16')).toBe('O\uFFFDK\uFFFD');
    expect(excerpt('binary')).toBe('\uFFFD\uFFFD\uFFFD(\uFFFD\uFFFD\uFFFD\uFFFD');
    expect(excerpt('gzip')).not.toContain('\0');
    for (const target of [utf16, gzip, binary, healthy])
      expect(tagsOf(target.received, 'bytes').size).toBe(5);
    expect(service.child.exitCode).toBeNull();
    expect(service.output()).not.toMatch(/unhandled|uncaught/i);
    service.child.kill('SIGTERM');
    await new Promise((resolve) => service.child.once('exit', resolve));
  });

  it('lives through each background path failing once (dispatch, enqueue, take, record, complete, prune, lost connections) and delivers every event', async () => {
    // An attempt past the retention period: the prune at start meets its fault.
    await db.query(
      `INSERT INTO webhooks (url, types, secret, enabled) VALUES ('https://receiver.invalid/old', '{*}', $1, false)`,
      [`whsec_${Buffer.alloc(24, 7).toString('base64')}`],
    );
    await db.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, attempt, at, outcome, duration_ms)
       SELECT id, 'old', 'module.updated', 1, now() - interval '90 days', 'delivered', 1 FROM webhooks LIMIT 1`,
    );
    // Each injected fault fires once: a sequence is not rolled back with the failed statement.
    await db.query(`
      CREATE OR REPLACE FUNCTION fault_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval(TG_ARGV[0]::regclass) = 1 THEN RAISE EXCEPTION 'injected fault %', TG_ARGV[0]; END IF;
        RETURN COALESCE(NEW, OLD);
      END $$`);
    const faults = {
      fault_dispatch: 'BEFORE UPDATE ON webhook_dispatch',
      fault_enqueue: 'BEFORE INSERT ON pgboss.job',
      fault_take: 'BEFORE UPDATE ON pgboss.job',
      fault_record: 'BEFORE INSERT ON webhook_deliveries',
      fault_streak: 'BEFORE UPDATE ON webhooks',
      fault_prune: 'BEFORE DELETE ON webhook_deliveries',
    };
    for (const [name, on] of Object.entries(faults)) {
      await db.query(`CREATE SEQUENCE ${name}`);
      await db.query(`CREATE TRIGGER ${name} ${on} FOR EACH ROW EXECUTE FUNCTION fault_once('${name}')`);
    }
    const service = await startChild();
    const token = tokenFor(await makeUser(asDatabase(db), { admin: true }));
    // One receiver fails its first answers, so the failure streak and a retry are written too.
    const flaky = await receiver((n) => (n < 2 ? 500 : 200));
    const created = await request(service.url, 'POST', '/api/webhooks', {
      token,
      body: { url: flaky.url, types: ['module.updated'] },
    });
    expect(created.status).toBe(201);
    await writeEvents('faults', 10);
    // A delivered attempt and a failed one recorded before the cut: the failed one's record is what meets the
    // failure streak's fault (attempts end and are recorded in any order, so one is not a sign of the other).
    await waitFor(
      async () => {
        const { rows } = await db.query<{ delivered: number; failed: number }>(
          `SELECT count(*) FILTER (WHERE outcome = 'delivered')::int AS delivered,
                  count(*) FILTER (WHERE outcome <> 'delivered')::int AS failed
           FROM webhook_deliveries WHERE event_id <> 'old'`,
        );
        return rows[0].delivered >= 1 && rows[0].failed >= 1;
      },
      { timeoutMs: 30_000, what: 'a first delivery and a first failure', seen: service.output },
    );
    // Every connection of the service is cut once (its pools, pg-boss's, the feed's listener).
    await db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    await writeEvents('after-cut', 10);
    await flaky.waitFor(
      (got) => tagsOf(got, 'faults').size === 10 && tagsOf(got, 'after-cut').size === 10,
      45_000,
    );
    for (const name of Object.keys(faults)) {
      const { rows } = await db.query<{ last_value: string; is_called: boolean }>(
        `SELECT last_value::text, is_called FROM ${name}`,
      );
      expect({ name, fired: rows[0].is_called }).toEqual({ name, fired: true });
    }
    expect(service.child.exitCode).toBeNull();
    expect(service.output()).not.toMatch(/unhandled|uncaught/i);
    const health = await request(service.url, 'GET', '/api/health');
    expect(health.status).toBe(200);
    service.child.kill('SIGTERM');
    await new Promise((resolve) => service.child.once('exit', resolve));
  });
});
