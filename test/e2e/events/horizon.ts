// Part of test/events.e2e-spec.ts: the change event horizon.
import pg from 'pg';
import { scratchDatabase, testDatabaseUrl, type UsedTestApp } from '../../support/app.js';
import { postCsv } from '../../support/csv.js';
import { makeModule } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { waitFor } from '../../support/wait-for.js';
import { startReceiver } from '../../support/webhook-receiver.js';

/** A module create's event shows in the feed and reaches a webhook within this (about 0.1 s when nothing waits). */
const PROMPT_MS = 5000;
/** The rows of the long write measured beside single creates: a roster import of the most rows an import takes. */
const IMPORT_ROWS = 10_000;

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];

/** A session that opened a transaction and took its id (`BEGIN; SELECT pg_current_xact_id()`), left open. */
async function openTransaction(url: string): Promise<{ xid: string; end(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url, application_name: 'events-horizon test' });
  await client.connect();
  await client.query('BEGIN');
  const [row] = (await client.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')).rows;
  return {
    xid: row.xid,
    async end() {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    },
  };
}

/**
 * docs/events.md, "What holds the feed back": the horizon of the feed and of the webhook dispatcher counts the
 * transactions of the service's own database only. One left open in another database of the same server (another
 * application, an idle-in-transaction session) holds nothing back; one left open in this database still does,
 * and what it commits late is still served, after the events that did not wait for it.
 */
export function changeEventHorizon({ app, api }: UsedTestApp): void {
  let token: string;
  let foreign: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
  const open: { end(): Promise<void> }[] = [];
  let receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];

  beforeEach(async () => {
    ({ token } = await freshAdmin(app, { username: 'root' }));
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((transaction) => transaction.end()));
    await Promise.all(receivers.map((receiver) => receiver.close()));
    receivers = [];
  });
  const feedEnd = async (): Promise<string> => {
    for (let after: string | undefined; ;) {
      const res = await api.get(`/api/events?limit=1000${after ? `&after=${after}` : ''}`, { token });
      if (res.body.data.events.length === 0) return res.body.data.next;
      after = res.body.data.next;
    }
  };
  const createModule = (code: string) =>
    api.post('/api/modules', { token, body: { code, year: 2026, description: null, credits: 10 } });

  it('serves events and delivers webhooks promptly while another database holds a transaction open', async () => {
    foreign ??= await scratchDatabase('mas_foreign');
    // A transaction with an id, open in another database of the same server, for the whole test.
    const other = await openTransaction(foreign.url);
    open.push(other);
    const receiver = await startReceiver();
    receivers.push(receiver);
    const hook = await api.post('/api/webhooks', {
      token,
      body: { url: receiver.url, types: ['module.created'] },
    });
    expect(hook.status).toBe(201);
    const after = await feedEnd();

    const startedAt = Date.now();
    const created = await createModule('HOR101');
    expect(created.status).toBe(201);
    const res = await api.get(`/api/events?after=${after}&wait=${PROMPT_MS / 1000}`, { token });
    const seenMs = Date.now() - startedAt;
    expect(
      res.body.data.events.map((event: { type: string; data: { id: number } }) => event.data.id),
    ).toEqual([created.body.data.id]);
    expect(seenMs).toBeLessThan(PROMPT_MS);
    await receiver.waitFor((got) => got.length === 1, PROMPT_MS);
    const deliveredMs = receiver.received[0].at - startedAt;
    expect(JSON.parse(receiver.received[0].body).data.id).toBe(created.body.data.id);
    console.log(
      `with a transaction open in another database: in the feed after ${seenMs} ms, delivered after ${deliveredMs} ms`,
    );
  });

  it("still waits for the service's own database's open transactions, and then serves what they commit", async () => {
    const after = await feedEnd();
    // A transaction of this database that wrote nothing yet: an event it may still write must not be skipped.
    const own = await openTransaction(testDatabaseUrl());
    open.push(own);
    const created = await createModule('HOR201');
    expect(created.status).toBe(201);
    const held = await api.get(`/api/events?after=${after}`, { token });
    expect(held.body.data).toEqual({ events: [], next: after });
    await own.end();
    const res = await api.get(`/api/events?after=${after}&wait=${PROMPT_MS / 1000}`, { token });
    expect(res.body.data.events.map((event: { data: { id: number } }) => event.data.id)).toEqual([
      created.body.data.id,
    ]);
  });

  it("holds other events back only while one of the service's own long writes runs, and says by how much", async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    await api.post('/api/webhooks', { token, body: { url: receiver.url, types: ['module.created'] } });
    await app.dataSource.query(
      `INSERT INTO users (username, email, password_hash)
       SELECT 'imp' || n, 'imp' || n || '@example.edu', 'x' FROM generate_series(1, $1) n`,
      [IMPORT_ROWS],
    );
    const target = await makeModule(app.dataSource, { code: 'IMP100', year: 2026 });
    const csv = `user,role\n${Array.from({ length: IMPORT_ROWS }, (_, i) => `imp${i + 1},Student`).join('\n')}\n`;
    let cursor = await feedEnd();

    // A reader following the feed (long-poll), noting when each module's event reached it.
    const seenAt = new Map<number, number>();
    let following = true;
    const follower = (async () => {
      while (following) {
        const res = await api.get(`/api/events?after=${cursor}&types=module.created&wait=2`, { token });
        for (const event of res.body.data.events as { data: { id: number } }[])
          seenAt.set(event.data.id, Date.now());
        cursor = res.body.data.next;
      }
    })();
    // Single creates, one after the other, before, during and after the import.
    const creates: { id: number; committedAt: number }[] = [];
    let creating = true;
    const creator = (async () => {
      for (let n = 0; creating; n++) {
        const res = await createModule(`IMS${String(n).padStart(3, '0')}`);
        expect(res.status).toBe(201);
        creates.push({ id: res.body.data.id, committedAt: Date.now() });
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    await waitFor(() => creates.length >= 5, { what: 'creates before the import' });
    const importStarted = Date.now();
    const imported = await postCsv(api, `/api/modules/${target.id}/roster/import`, token, csv);
    const importEnded = Date.now();
    expect(imported.status).toBe(200);
    const countAfter = creates.length;
    await waitFor(() => creates.length >= countAfter + 5, { what: 'creates after the import' });
    creating = false;
    await creator;
    await waitFor(() => creates.every((create) => seenAt.has(create.id)), {
      what: 'every create in the feed',
      timeoutMs: 20_000,
    });
    await receiver.waitFor((got) => got.length === creates.length, 20_000);
    following = false;
    await follower;

    const deliveredAt = new Map(
      receiver.received.map((request) => [JSON.parse(request.body).data.id as number, request.at]),
    );
    expect([...deliveredAt.keys()].sort()).toEqual(creates.map((create) => create.id).sort());
    const during = creates.filter(
      (create) => create.committedAt >= importStarted && create.committedAt <= importEnded,
    );
    const feedMs = during.map((create) => Math.max(0, seenAt.get(create.id)! - create.committedAt));
    const deliveryMs = during.map((create) => Math.max(0, deliveredAt.get(create.id)! - create.committedAt));
    // Held at most while the import ran: nothing waits past its end by more than a round of the follower.
    for (const create of during) expect(seenAt.get(create.id)! - importEnded).toBeLessThan(PROMPT_MS);
    const others = creates.filter((create) => !during.includes(create));
    const otherMs = others.map((create) => Math.max(0, seenAt.get(create.id)! - create.committedAt));
    console.log(
      `roster import of ${IMPORT_ROWS} rows: ${importEnded - importStarted} ms; ${during.length} creates during it: ` +
        `feed p50 ${percentile(feedMs, 50)} ms, p95 ${percentile(feedMs, 95)} ms, max ${Math.max(...feedMs)} ms; ` +
        `delivery p50 ${percentile(deliveryMs, 50)} ms, p95 ${percentile(deliveryMs, 95)} ms; ` +
        `${others.length} creates before and after it: feed p95 ${percentile(otherMs, 95)} ms`,
    );
  });
}
