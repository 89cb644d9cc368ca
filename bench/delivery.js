// `npm run build && node bench/delivery.js`: webhook delivery throughput from one replica (docs/webhooks.md,
// "Figures") and the change feed's 1 000-event read (docs/events.md). The built service runs in a child process
// (bench/service.js) with one webhook pointing at a fast receiver in this process (204 at once, the signature
// not checked); N events (`--events=`, default 3 000) are committed in transactions of 100 at once, and the run
// measures commit to the last first arrival: events delivered per second, duplicates, and the CPU the service
// process and the database's backends spent per event. Then `GET /api/events?limit=1000` from the feed's start,
// `--reads=` times (default 15): median and p95 over HTTP, and the statement's own time in PostgreSQL.
//
//   node bench/delivery.js                      embedded PostgreSQL in a temporary directory
//   DATABASE_URL=postgres://… node bench/delivery.js   a database of its own on that server, dropped afterwards
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout } from 'node:timers';
import pg from 'pg';
import { call, database, runWithCleanups, startService, writeResults } from './harness.js';
import { cpuMillis, loadAverage } from './lib/measure.js';
import { arg, out } from './lib/options.js';

const EVENTS = Number(arg('events', 3000));
const READS = Number(arg('reads', 15));
const PER_TRANSACTION = 100;
const cleanups = [];

async function main() {
  const databaseUrl = await database(cleanups, 'mas_delivery_bench');
  const service = await startService(databaseUrl, cleanups, {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_ALLOW_HTTP: 'true',
  });
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  cleanups.push(() => client.end());
  out(`load average at start: ${loadAverage()}`);

  const seen = new Map();
  let lastFirstArrival = 0;
  let allArrived;
  const arrived = new Promise((resolve) => (allArrived = resolve));
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = req.headers['webhook-id'];
      const count = (seen.get(id) ?? 0) + 1;
      seen.set(id, count);
      if (count === 1) {
        lastFirstArrival = performance.now();
        if (seen.size === EVENTS) allArrived();
      }
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => receiver.close(resolve)));
  const { port } = receiver.address();
  await call(service.url, 'POST', '/api/webhooks', service.token, {
    url: `http://127.0.0.1:${port}/hook`,
    types: ['module.created'],
  });

  const backends = async () =>
    (await client.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)).rows.map(
      (row) => row.pid,
    );
  const pids = [service.pid, ...(await backends())];
  const before = await Promise.all(pids.map(cpuMillis));
  const started = performance.now();
  for (let done = 0; done < EVENTS; done += PER_TRANSACTION) {
    await client.query(
      `WITH e AS (INSERT INTO change_events (type, data)
                  SELECT 'module.created', jsonb_build_object('id', g, 'code', 'BEN' || lpad((g % 1000)::text, 3, '0'),
                           'year', 2026, 'description', 'Delivery bench', 'credits', 15,
                           'created_at', '2026-11-27T00:00:00.000Z', 'updated_at', '2026-11-27T00:00:00.000Z')
                  FROM generate_series($1::int, $2::int) g ORDER BY g)
       SELECT pg_notify('change_events', '')`,
      [done + 1, Math.min(EVENTS, done + PER_TRANSACTION)],
    );
  }
  const committed = performance.now();
  await arrived;
  const seconds = (lastFirstArrival - started) / 1000;
  // Let the last attempts' records commit before reading the CPU.
  for (;;) {
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM webhook_deliveries`);
    if (rows[0].n >= EVENTS) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const after = await Promise.all(pids.map(cpuMillis));
  const cpu = after.reduce((sum, value, i) => sum + Math.max(0, value - before[i]), 0);
  const serviceCpu = after[0] - before[0];
  const duplicates = [...seen.values()].reduce((sum, n) => sum + n - 1, 0);
  const {
    rows: [attempts],
  } = await client.query(
    `SELECT count(*)::int AS n, count(*) FILTER (WHERE outcome <> 'delivered')::int AS other FROM webhook_deliveries`,
  );
  out(
    `\n## Delivery: ${EVENTS} events committed in ${Math.round(committed - started)} ms (${PER_TRANSACTION} per transaction)`,
  );
  out(
    `  all delivered after ${(seconds * 1000).toFixed(0)} ms: ${(EVENTS / seconds).toFixed(0)} events/s; ` +
      `duplicates ${duplicates}; attempts recorded ${attempts.n} (not delivered: ${attempts.other}); ` +
      `CPU ${((cpu * 1000) / EVENTS).toFixed(0)} µs per event (service process ${((serviceCpu * 1000) / EVENTS).toFixed(0)}, ` +
      `database backends ${(((cpu - serviceCpu) * 1000) / EVENTS).toFixed(0)})`,
  );

  const times = [];
  let bytes = 0;
  for (let i = 0; i < READS; i++) {
    const t0 = performance.now();
    const text = await call(service.url, 'GET', '/api/events?limit=1000', service.token);
    times.push(performance.now() - t0);
    bytes = text.length;
    if (JSON.parse(text).data.events.length !== 1000)
      throw new Error('the feed read did not serve 1 000 events');
  }
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1);
  out(`\n## Feed: GET /api/events?limit=1000 (${(bytes / 1024).toFixed(0)} KiB), ${READS} reads`);
  out(`  median ${at(0.5)} ms, p95 ${at(0.95)} ms, best ${times[0].toFixed(1)} ms`);
  out(`\nload average at end: ${loadAverage()}`);

  // bench/results/delivery.{json,svg}: each figure against its target (docs/performance.md): at least 1 000
  // events delivered a second from one replica, the 1 000-event feed read under 50 ms (median). A recorded
  // run's chart is docs/images/benchmark-delivery.svg.
  const eventsPerSecond = EVENTS / seconds;
  const feedMedianMs = Number(at(0.5));
  await writeResults(
    'delivery',
    { events: EVENTS, eventsPerSecond, cpuMicrosPerEvent: (cpu * 1000) / EVENTS, feedMedianMs },
    [
      {
        route: `delivery: ${eventsPerSecond.toFixed(0)} events/s ÷ 1 000`,
        ratio: eventsPerSecond / 1000,
        target: 1,
      },
      { route: `feed read: 50 ms ÷ ${feedMedianMs} ms`, ratio: 50 / feedMedianMs, target: 1 },
    ],
    {
      title: "Webhook delivery (one replica) and the feed's 1 000-event read, against their targets",
      marks: [[1, '1.0']],
      legend: 'green: target met (≥ 1); red: not',
    },
    out,
  );
}

await runWithCleanups(main, cleanups);
