// Module creates with and without their change event.
import autocannon from 'autocannon';
import pg from 'pg';
import { cpuMicros, mean, postgresCpuMicros, settle } from '../measure.js';
import { log } from '../options.js';

/**
 * A module create (`POST /api/modules`, admin) with its change event written in its transaction, and with the
 * service's recorder switched off (bench/service.js), in alternating rounds at 8 connections. Every request
 * creates a new module (codes `EVA000`…, year 2098); the creates are deleted at the end.
 */
export async function changeEventTiming(servers, token, { rounds, seconds }, databaseUrl) {
  // The earlier scenarios' dead rows (the bulk delete's) vacuumed now: left to autovacuum, its work landed in
  // whichever round it started in, and PostgreSQL's CPU per create with one side read several times the other's.
  const vacuum = new pg.Client({ connectionString: databaseUrl });
  await vacuum.connect();
  await vacuum.query('VACUUM (ANALYZE)');
  await vacuum.end();
  await settle(databaseUrl);
  let next = 0;
  const code = () => {
    const i = next++;
    const letters = [26 * 26, 26, 1].map((d) => String.fromCharCode(65 + (Math.floor(i / 1000 / d) % 26)));
    return `${letters.join('')}${String(i % 1000).padStart(3, '0')}`;
  };
  const create = async () => {
    const result = await autocannon({
      url: `${servers.service.url}/api/modules`,
      connections: 8,
      duration: seconds,
      timeout: 10,
      requests: [
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({
              code: code(),
              year: 2098,
              description: 'Change event bench',
              credits: 15,
            }),
          }),
        },
      ],
    });
    const created = Number(result.statusCodeStats?.['201']?.count ?? 0);
    const all = Object.values(result.statusCodeStats ?? {}).reduce(
      (sum, { count }) => sum + Number(count),
      0,
    );
    if (result.errors + result.timeouts > 0 || created !== all)
      throw new Error(
        `module creates: ${result.errors} errors, ${result.timeouts} timeouts, ${all - created} not 201`,
      );
    return { requests: created, seconds: result.duration, p50: result.latency.p50, p99: result.latency.p99 };
  };
  const runs = { with: [], without: [] };
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? ['with', 'without'] : ['without', 'with']) {
      await servers.service.ask(side === 'with' ? 'events:on' : 'events:off', 'events');
      const before = { service: await cpuMicros(servers.service.pid), postgres: await postgresCpuMicros() };
      const run = await create();
      await settle(databaseUrl);
      // Including what the commits set off after the answers (the dispatcher's rounds), up to the settle.
      run.serviceCpuMicros = (await cpuMicros(servers.service.pid)) - before.service;
      run.postgresCpuMicros = (await postgresCpuMicros()) - before.postgres;
      runs[side].push(run);
    }
  }
  await servers.service.ask('events:on', 'events');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const events = await client.query(
    `SELECT count(*)::int AS n FROM change_events WHERE type = 'module.created'`,
  );
  await client.query(`DELETE FROM modules WHERE year = 2098`);
  await client.end();
  const summary = (side) => ({
    rps:
      runs[side].reduce((sum, r) => sum + r.requests, 0) / runs[side].reduce((sum, r) => sum + r.seconds, 0),
    p50: mean(runs[side].map((r) => r.p50)),
    p99: mean(runs[side].map((r) => r.p99)),
    ...Object.fromEntries(
      ['service', 'postgres'].map((process) => [
        `${process}CpuUs`,
        runs[side].reduce((sum, r) => sum + r[`${process}CpuMicros`], 0) /
          runs[side].reduce((sum, r) => sum + r.requests, 0),
      ]),
    ),
  });
  const result = {
    with: summary('with'),
    without: summary('without'),
    eventsWritten: events.rows[0].n,
    createsWith: runs.with.reduce((sum, r) => sum + r.requests, 0),
  };
  result.ratio = result.with.rps / result.without.rps;
  result.p99Ratio = result.with.p99 / result.without.p99;
  log(
    `module create: ${result.with.rps.toFixed(0)} req/s with its change event, ${result.without.rps.toFixed(0)} ` +
      `without, ratio ${result.ratio.toFixed(2)}, p99 ratio ${result.p99Ratio.toFixed(2)}; CPU µs per create, with / ` +
      `without: service ${result.with.serviceCpuUs.toFixed(0)} / ${result.without.serviceCpuUs.toFixed(0)}, ` +
      `PostgreSQL ${result.with.postgresCpuUs.toFixed(0)} / ${result.without.postgresCpuUs.toFixed(0)}`,
  );
  return result;
}
