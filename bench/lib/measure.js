// Requests, their proof of equality, and the load: autocannon rounds with CPU time and peak resident size.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { setTimeout } from 'node:timers';
import autocannon from 'autocannon';
import pg from 'pg';
import { log } from './options.js';

export async function call(baseUrl, { path: route, headers = {} }) {
  const response = await globalThis.fetch(baseUrl + route, { headers });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

export async function login(baseUrl, username, password) {
  const response = await globalThis.fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  const json = await response.json();
  if (response.status !== 200) throw new Error(`login as ${username} failed: ${JSON.stringify(json)}`);
  return json.data.token;
}

/** Headers whose values differ by design between two responses: the request id and the clock. */
const DIFFERING_HEADERS = new Set(['date', 'x-request-id', 'keep-alive']);

/** Status, body bytes and every header (names and values, but for the request id's value and Date) must agree. */
export async function proveEqual(servers, route) {
  const [service, bare] = await Promise.all([
    call(servers.service.url, route),
    call(servers.bare.url, route),
  ]);
  const problems = [];
  const expected = route.status ?? 200;
  if (service.status !== expected)
    problems.push(`service answered ${service.status}: ${service.body.slice(0, 300)}`);
  if (service.status !== bare.status) problems.push(`status ${service.status} ≠ ${bare.status}`);
  if (service.body !== bare.body) {
    let at = 0;
    while (service.body[at] === bare.body[at]) at++;
    problems.push(
      `bodies differ at byte ${at} (lengths ${service.body.length}, ${bare.body.length}):\n` +
        `  service …${service.body.slice(Math.max(0, at - 80), at + 80)}\n` +
        `  bare    …${bare.body.slice(Math.max(0, at - 80), at + 80)}`,
    );
  }
  const names = new Set([...service.headers.keys(), ...bare.headers.keys()]);
  for (const name of names) {
    if (DIFFERING_HEADERS.has(name)) {
      if (service.headers.has(name) !== bare.headers.has(name))
        problems.push(`header ${name} on one side only`);
    } else if (service.headers.get(name) !== bare.headers.get(name)) {
      problems.push(`header ${name}: ${service.headers.get(name)} ≠ ${bare.headers.get(name)}`);
    }
  }
  if (problems.length > 0) throw new Error(`${route.route}: responses differ\n${problems.join('\n')}`);
  return service.body.length;
}

/** CPU time (user + system, every thread) a process has used so far, in µs; fields 14 and 15 of its stat. */
export async function cpuMicros(pid) {
  if (pid === undefined) return undefined;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is the state (field 3), so utime (14) and stime (15) are fields[11] and fields[12].
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
/** CPU ms a process has used so far (user + system), 0 once it is gone. */
export const cpuMillis = async (pid) => ((await cpuMicros(pid)) ?? 0) / 1000;

/** The machine's load averages over 1, 5 and 15 minutes, as the reports print them (`0.52 0.61 0.70`). */
export const loadAverage = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/**
 * CPU time (µs) used so far by every PostgreSQL process of the machine (their command name is `postgres`): the
 * server's backends, the WAL writer and the checkpointer. Other PostgreSQL servers of the machine count too;
 * idle, they add next to nothing.
 */
export async function postgresCpuMicros() {
  let total = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}
/** USER_HZ: 100 on Linux for every architecture the project runs on. */
const CLOCK_TICKS = 100;

/**
 * One autocannon run; any error, timeout or status other than the route's (200 unless it says) fails the benchmark. With `pid`, also the
 * server's CPU time per request (user + system time of its process over the run ÷ requests), which does not
 * depend on how busy the shared machine is the way requests per second do.
 */
export async function load(url, route, seconds, connections, pid) {
  const cpuBefore = await cpuMicros(pid);
  const result = await autocannon({
    url: url + route.path,
    headers: route.headers ?? {},
    connections,
    duration: seconds,
    timeout: 10,
  });
  const responses = Object.values(result.statusCodeStats ?? {}).reduce(
    (sum, { count }) => sum + Number(count),
    0,
  );
  const cpuAfter = await cpuMicros(pid);
  const expected = String(route.status ?? 200);
  const bad = responses - Number(result.statusCodeStats?.[expected]?.count ?? 0);
  if (result.errors + result.timeouts + bad > 0) {
    throw new Error(
      `${route.route} on ${url}: ${result.errors} errors, ${result.timeouts} timeouts, ${bad} not ${expected}`,
    );
  }
  return {
    requests: responses,
    seconds: result.duration,
    rps: responses / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMicros: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
  };
}

/** CPU µs per request over a side's rounds (undefined when /proc could not be read). */
function cpuPerRequest(runs) {
  if (runs.some((r) => r.cpuMicros === undefined)) return undefined;
  const requests = runs.reduce((sum, r) => sum + r.requests, 0);
  return requests > 0 ? runs.reduce((sum, r) => sum + r.cpuMicros, 0) / requests : undefined;
}

/**
 * Waits until neither server has a statement running and no autovacuum worker is at work in the database:
 * requests still in flight when autocannon stops (a slow route at 32 connections), and a vacuum that a round's
 * writes set off, would otherwise load the next measurement.
 */
export async function settle(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (let waited = 0; waited < 60_000; waited += 200) {
      const { rows } = await client.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE (state = 'active' AND application_name IN ('module-admin-service', 'bench-bare'))
            OR (backend_type = 'autovacuum worker' AND datname = current_database())`,
      );
      if (rows[0].n === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    log('warning: statements still running after 60 s');
  } finally {
    await client.end();
  }
}

/**
 * Starts a new peak for `peakRssMiB`: Linux resets a process's VmHWM to its current resident size when "5" is
 * written to its clear_refs (proc(5)). Returns false where that is not allowed.
 */
export async function resetPeakRss(pid) {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Peak resident set size (VmHWM) of a process, in MiB. */
export async function peakRssMiB(pid) {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Number((Number(match[1]) / 1024).toFixed(1)) : undefined;
  } catch {
    return undefined;
  }
}

export const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** Alternating rounds: service then bare, then bare then service, …; each route its own rounds in a row. */
export async function measureRoutes(servers, list, { rounds, seconds, warmup, connections }, databaseUrl) {
  const rows = [];
  for (const route of list) {
    const bytes = await proveEqual(servers, route);
    const runs = { service: [], bare: [] };
    // Each route's own peak resident size (from its warm-up on), and where the service's memory was at its peak.
    const peakReset = (await resetPeakRss(servers.service.pid)) && (await resetPeakRss(servers.bare.pid));
    if (!peakReset && rows.length === 0) log('warning: no peak RSS per route (clear_refs not writable)');
    await servers.service.ask('peak:start', 'peak');
    for (const side of ['service', 'bare']) {
      await load(servers[side].url, route, warmup, connections);
      await settle(databaseUrl);
    }
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ['service', 'bare'] : ['bare', 'service'];
      for (const side of order) {
        runs[side].push(await load(servers[side].url, route, seconds, connections, servers[side].pid));
        await settle(databaseUrl);
      }
    }
    const summary = (side) => ({
      rps:
        runs[side].reduce((sum, r) => sum + r.requests, 0) /
        runs[side].reduce((sum, r) => sum + r.seconds, 0),
      p50: mean(runs[side].map((r) => r.p50)),
      p99: mean(runs[side].map((r) => r.p99)),
      cpuUs: cpuPerRequest(runs[side]),
      rounds: runs[side].map((r) => Number(r.rps.toFixed(1))),
    });
    const atPeak = await servers.service.ask('peak:stop', 'peak');
    const row = {
      route: route.route,
      path: route.path,
      bytes,
      service: summary('service'),
      bare: summary('bare'),
      peakRssMiB: peakReset
        ? { service: await peakRssMiB(servers.service.pid), bare: await peakRssMiB(servers.bare.pid), atPeak }
        : undefined,
    };
    row.ratio = row.service.rps / row.bare.rps;
    row.p99Ratio = row.service.p99 / row.bare.p99;
    row.target = route.target ?? 0.9;
    row.p99Target = 'p99' in route ? route.p99 : 1.25;
    const p99Ok = row.p99Target === undefined || row.p99Ratio <= row.p99Target;
    row.met = row.ratio >= row.target && p99Ok;
    row.verdict =
      `≥ ${row.target}${row.p99Target === undefined ? '' : `, p99 ≤ ${row.p99Target}×`}: ` +
      (row.met ? 'met' : 'not met');
    rows.push(row);
    log(
      `${route.route}: service ${row.service.rps.toFixed(0)} req/s, bare ${row.bare.rps.toFixed(0)} req/s, ` +
        `ratio ${row.ratio.toFixed(2)}, p99 ratio ${row.p99Ratio.toFixed(2)} (${bytes} bytes); CPU per request ` +
        `service ${row.service.cpuUs?.toFixed(0)} µs, bare ${row.bare.cpuUs?.toFixed(0)} µs`,
    );
  }
  return rows;
}
