// The national scale (bench/README.md, "National scale") on databases seeded beforehand by
// `npm run seed:demo -- --scale N` (scale 1 000 takes minutes and 3.2 GB, so it is seeded once and reused):
// - the paged reads: the people lists and the searches, the service and the lean bare implementation side by side
//   on each, 16 connections;
// - the LMS export of one year (docs/lms-exports.md): each profile's zip read over HTTP to its last byte, with the
//   service's peak resident size, beside `COPY (…) TO STDOUT (FORMAT csv)` and a cursor of the same membership
//   rows (bench/lib/exports.js, as bench/exports.js measures on data of its own).
// Writes bench/results/national.json (per scale: `rows`, the paged reads; `exports`), keeping what a previous
// run wrote for the part not run, and, when the paged reads ran, docs/images/national-p99.svg (p99 against the
// number of users, both sides).
//
//   NATIONAL_DATABASES="50=postgres://…/s50 200=postgres://…/s200 1000=postgres://…/s1000" node bench/national.js
//   NATIONAL_ONLY=reads | exports       one part only (default: both)
//   NATIONAL_SECONDS=5                  each paged read's load, per side
//   NATIONAL_EXPORT_RUNS=2              timed runs of each export and of each baseline
//
// Needs a build. A token is minted for the seeded database's first administrator with its JWT secret, so no
// password is needed; the routes are proved to give the same `total` on both sides before they are timed. The
// databases are only read, but for what each export itself records (its enrolment count in `lms_exports` and an
// `export.lms` audit event).
import { Buffer } from 'node:buffer';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import process from 'node:process';
import pg from 'pg';
import { cleanup, cleanUpOnSignals } from './lib/cleanup.js';
import { copyOnce, cursorOnce, exportOnce, hasPsql, PROFILES } from './lib/exports.js';
import { call, load, loadAverage, settle } from './lib/measure.js';
import { BENCH_DIR, log, RESULTS_DIR, ROOT } from './lib/options.js';
import { startServers, startService } from './lib/servers.js';

const SECONDS = Number(process.env.NATIONAL_SECONDS ?? 5);
const CONNECTIONS = 16;
const EXPORT_RUNS = Number(process.env.NATIONAL_EXPORT_RUNS ?? 2);
const ONLY = process.env.NATIONAL_ONLY?.trim() || undefined;
if (ONLY !== undefined && ONLY !== 'reads' && ONLY !== 'exports')
  throw new Error(`NATIONAL_ONLY must be reads or exports, not ${ONLY}`);
const RUN_READS = ONLY !== 'exports';
const RUN_EXPORTS = ONLY !== 'reads';

const base64url = (value) => Buffer.from(value).toString('base64url');
function token(secret, sub) {
  const iat = Math.floor(Date.now() / 1000);
  const head = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = base64url(JSON.stringify({ sub, admin: true, iat, exp: iat + 3600 }));
  const signature = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${signature}`;
}

/** The seeded database's first administrator and its numbers of users and modules. */
async function datasetOf(db) {
  const [admin] = (await db.query(`SELECT id FROM users WHERE admin ORDER BY id LIMIT 1`)).rows;
  const [counts] = (
    await db.query(
      `SELECT (SELECT total FROM user_stats)::int AS users, (SELECT total FROM module_stats)::int AS modules`,
    )
  ).rows;
  return { admin: Number(admin.id), users: counts.users, modules: counts.modules };
}

/** The measured routes at a scale: the biggest module's id and a family name come from the data. */
async function routesOf(db) {
  // The module with the most people (its members read through the index on module and role).
  const [biggest] = (
    await db.query(
      `SELECT module_id AS id, count(*)::int AS members FROM user_module_roles GROUP BY module_id ORDER BY 2 DESC, 1 LIMIT 1`,
    )
  ).rows;
  const big = `/api/modules/${biggest.id}`;
  return {
    biggest,
    routes: [
      { name: 'users, page 1', path: '/api/users', both: true },
      { name: 'users, family name (smith)', path: '/api/users?query=smith', both: true },
      { name: 'users, username filter', path: '/api/users?username=okafor', both: false },
      { name: 'users, a username (ben.smith1)', path: '/api/users?query=ben.smith1', both: true },
      { name: 'modules, page 1', path: '/api/modules', both: true },
      { name: 'modules, rare word (palaeography)', path: '/api/modules?query=palaeography', both: true },
      {
        name: 'personnel of the biggest module',
        path: `${big}/personnel?per_page=50`,
        both: false,
      },
      { name: 'students of the biggest module', path: `${big}/students?per_page=50`, both: false },
    ],
  };
}

async function total(url, route, headers) {
  const { status, body } = await call(url, { path: route, headers });
  if (status !== 200) throw new Error(`${route}: ${status} ${body}`);
  return JSON.parse(body).data.total;
}

/** p99 (ms) against users, a line per side and route, log-scaled x. */
function p99Chart(results) {
  const width = 900;
  const height = 460;
  const left = 70;
  const right = 300;
  const top = 40;
  const bottom = 60;
  const series = [];
  for (const name of new Set(results.flatMap((r) => r.rows.map((row) => row.name)))) {
    for (const side of ['service', 'bare']) {
      const points = results
        .map((r) => ({ x: r.users, y: r.rows.find((row) => row.name === name)?.[side]?.p99 }))
        .filter((p) => p.y !== undefined);
      if (points.length > 0) series.push({ label: `${side}: ${name}`, side, points });
    }
  }
  const xs = results.map((r) => r.users);
  const lx = (x) => Math.log10(x);
  const [x0, x1] = [Math.min(...xs.map(lx)), Math.max(...xs.map(lx))];
  const yMax = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.y))) * 1.1;
  const ly = (y) => Math.log10(Math.max(y, 1));
  const X = (x) => left + ((lx(x) - x0) / Math.max(x1 - x0, 1e-9)) * (width - left - right);
  const Y = (y) => top + (1 - ly(y) / ly(yMax)) * (height - top - bottom);
  const colours = ['#1565c0', '#2e7d32', '#c62828', '#6a1b9a', '#ef6c00', '#00838f', '#5d4037'];
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">p99 (ms, log) against users (log): service solid, bare dashed</text>`,
  ];
  for (const y of [1, 10, 100, 1000, 10000].filter((v) => v <= yMax))
    parts.push(
      `<line x1="${left}" x2="${width - right}" y1="${Y(y)}" y2="${Y(y)}" stroke="#ddd"/>`,
      `<text x="${left - 6}" y="${Y(y) + 4}" text-anchor="end">${y}</text>`,
    );
  for (const x of xs)
    parts.push(
      `<text x="${X(x)}" y="${height - bottom + 18}" text-anchor="middle">${x.toLocaleString('en')}</text>`,
    );
  const names = [...new Set(series.map((s) => s.label.replace(/^\w+: /, '')))];
  series.forEach((s, i) => {
    const colour = colours[names.indexOf(s.label.replace(/^\w+: /, '')) % colours.length];
    const d = s.points
      .map((p, j) => `${j === 0 ? 'M' : 'L'}${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`)
      .join(' ');
    parts.push(
      `<path d="${d}" fill="none" stroke="${colour}" stroke-width="2"${s.side === 'bare' ? ' stroke-dasharray="5 4"' : ''}/>`,
    );
    if (s.side === 'service')
      parts.push(
        `<text x="${width - right + 10}" y="${top + 16 * i}" fill="${colour}">${s.label.replace('service: ', '')}</text>`,
      );
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

/**
 * The paged reads at a scale: each route on each side that has it, after a 1 s warm-up. Every route is first
 * loaded once for 1 s on each side, so whichever route comes first is not also the one that pays for a freshly
 * started process's compilation (the first route measured ran 0.6× its rate in a second round before).
 */
async function measureReads(db, sides, headers) {
  const { biggest, routes } = await routesOf(db);
  log(`  the biggest module has ${biggest.members} people`);
  const sidesOf = (route) => (route.both ? sides : { service: sides.service });
  for (const route of routes) {
    const totals = await Promise.all(
      Object.values(sidesOf(route)).map((side) => total(side.url, route.path, headers)),
    );
    if (new Set(totals).size !== 1) throw new Error(`${route.path}: totals differ ${totals.join(' / ')}`);
    route.total = totals[0];
    for (const server of Object.values(sidesOf(route)))
      await load(server.url, { path: route.path, headers, route: route.name }, 1, CONNECTIONS, server.pid);
  }
  const rows = [];
  for (const route of routes) {
    const measured = sidesOf(route);
    const row = { name: route.name, total: route.total };
    for (const [side, server] of Object.entries(measured)) {
      await load(server.url, { path: route.path, headers, route: route.name }, 1, CONNECTIONS, server.pid);
      row[side] = await load(
        server.url,
        { path: route.path, headers, route: route.name },
        SECONDS,
        CONNECTIONS,
        server.pid,
      );
    }
    const cpu = (r) => (r.cpuMicros === undefined ? '' : `, ${Math.round(r.cpuMicros / r.requests)} µs CPU`);
    log(
      `  ${route.name}: service p50 ${row.service.p50} p99 ${row.service.p99} (${row.service.rps.toFixed(0)}/s${cpu(row.service)})` +
        (row.bare
          ? `, bare p50 ${row.bare.p50} p99 ${row.bare.p99} (${row.bare.rps.toFixed(0)}/s${cpu(row.bare)})`
          : ''),
    );
    rows.push(row);
  }
  return { biggestModule: biggest.members, rows };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/**
 * The LMS export of one year at a scale. The year is the latest one: it is the year a nightly export serves, and
 * in the seeded data the year with the most memberships (modules are spread evenly over the years, and the latest
 * year holds module 0, the introductory course with 6.8 % of the students: at scale 50, 65 745 memberships against
 * 60 709–62 834 in each other year). Each profile is checked with `preview=true` (which writes nothing) to export
 * as many enrolments as the baseline reads rows, exported once untimed (which also proves it answers 200), then
 * timed `EXPORT_RUNS` times, each run the COPY, the cursor and both zips in turn, so that a change in the shared
 * machine's load falls on all of them. The ratio is the median export time ÷ the median COPY time.
 */
async function measureExports(db, databaseUrl, service, token) {
  const [{ year }] = (await db.query(`SELECT max(year)::int AS year FROM modules`)).rows;
  const [{ memberships }] = (
    await db.query(
      `SELECT count(*)::int AS memberships FROM user_module_roles r JOIN modules m ON m.id = r.module_id
       WHERE m.year = $1`,
      [year],
    )
  ).rows;
  const loadAtStart = loadAverage();
  log(`  LMS export of ${year}: ${memberships} memberships; load average ${loadAtStart}`);
  // Each export that is not a preview records its enrolment count (lms_exports) and an audit event. max_drop=100
  // runs the drop check a scheduled job runs (docs/lms-exports.md) but never refuses, so that runs repeated on the
  // same database, or after its year was changed, are all valid.
  const query = `?year=${year}&max_drop=100`;
  const previews = {};
  for (const [profile, route] of PROFILES) {
    const { status, body } = await call(service.url, {
      path: `${route}?year=${year}&preview=true`,
      headers: { authorization: `Bearer ${token}` },
    });
    if (status !== 200) throw new Error(`${route} preview: ${status} ${body}`);
    previews[profile] = JSON.parse(body).data;
  }
  // One untimed export of each profile first, so the first measured one does not pay for compiling the code path.
  for (const [profile, route] of PROFILES) {
    const result = await exportOnce(service, route + query, token);
    log(`  ${profile}: untimed export answered 200, ${result.bytes} bytes in ${result.ms} ms`);
  }
  const withCopy = hasPsql();
  if (!withCopy) log('  psql is not on the PATH: the ratio is against the cursor');
  const runs = { copy: [], cursor: [], ...Object.fromEntries(PROFILES.map(([profile]) => [profile, []])) };
  for (let run = 1; run <= EXPORT_RUNS; run++) {
    if (withCopy) {
      const copy = await copyOnce(databaseUrl, year);
      runs.copy.push(copy);
      log(`  run ${run}: COPY … TO STDOUT (psql) ${copy.ms} ms, ${copy.bytes} bytes`);
    }
    const cursor = await cursorOnce(db, year);
    runs.cursor.push(cursor);
    log(`  run ${run}: pg-query-stream cursor ${cursor.ms} ms, ${cursor.rows} rows`);
    for (const [profile] of PROFILES) {
      if (previews[profile].enrollments !== cursor.rows)
        throw new Error(
          `${profile} exports ${previews[profile].enrollments} enrolments, the baseline reads ${cursor.rows} rows`,
        );
    }
    for (const [profile, route] of PROFILES) {
      const result = await exportOnce(service, route + query, token);
      runs[profile].push(result);
      log(
        `  run ${run}: ${profile} ${result.ms} ms to the last byte, ${result.bytes} bytes; service RSS idle ` +
          `${result.idleRssMiB} MiB, peak ${result.peakRssMiB} MiB`,
      );
    }
  }
  const baseline = withCopy ? 'copy' : 'cursor';
  const lean = median(runs[baseline].map((r) => r.ms));
  const profiles = {};
  for (const [profile] of PROFILES) {
    const ms = median(runs[profile].map((r) => r.ms));
    profiles[profile] = {
      ms,
      ratio: Number((ms / lean).toFixed(2)),
      bytes: runs[profile].at(-1).bytes,
      files: previews[profile].files,
      peakRssMiB: Math.max(...runs[profile].map((r) => r.peakRssMiB)),
      runs: runs[profile],
    };
    log(
      `  ${profile}: median ${ms} ms ÷ ${baseline} ${lean} ms = ${profiles[profile].ratio}, ` +
        `${profiles[profile].bytes} bytes, peak RSS ${profiles[profile].peakRssMiB} MiB`,
    );
  }
  const loadAtEnd = loadAverage();
  log(`  load average ${loadAtEnd}`);
  return {
    year,
    memberships,
    exportedRows: runs.cursor[0].rows,
    baseline,
    copy: withCopy ? { ms: lean, bytes: runs.copy[0].bytes, runs: runs.copy } : undefined,
    cursor: { ms: median(runs.cursor.map((r) => r.ms)), runs: runs.cursor },
    profiles,
    loadAverage: { start: loadAtStart, end: loadAtEnd },
  };
}

/** What a previous run wrote to `file`, to keep the part this run does not measure; [] when none. */
async function previousResults(file) {
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    if (error?.code === 'ENOENT') return [];
    throw error;
  }
}

async function main() {
  cleanUpOnSignals();
  const databases = (process.env.NATIONAL_DATABASES ?? '').split(/\s+/).filter(Boolean);
  if (databases.length === 0) throw new Error('NATIONAL_DATABASES is not set (see the head of this file)');
  const secret = randomBytes(24).toString('hex');
  const file = path.join(RESULTS_DIR, 'national.json');
  const results = await previousResults(file);
  log(
    `${RUN_READS ? 'paged reads' : ''}${RUN_READS && RUN_EXPORTS ? ' and ' : ''}${RUN_EXPORTS ? 'exports' : ''}`,
  );
  for (const entry of databases) {
    const [scale, url] = entry.split(/=(.*)/s);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const { admin, users, modules } = await datasetOf(db);
      log(`scale ${scale}: ${users} users, ${modules} modules; load average ${loadAverage()}`);
      const jwt = token(secret, admin);
      const headers = { authorization: `Bearer ${jwt}` };
      const servers = RUN_READS
        ? await startServers(url, secret)
        : { service: (await startService(url, secret)).service };
      const result = { scale: Number(scale), users, modules };
      if (RUN_READS) {
        const { service, bare } = servers;
        Object.assign(result, await measureReads(db, { service, bare }, headers));
      }
      if (RUN_EXPORTS) {
        // Nothing left running from the paged reads.
        if (RUN_READS) await settle(url);
        result.exports = await measureExports(db, url, servers.service, jwt);
      }
      await servers.service.stop();
      await servers.bare?.stop();
      const at = results.findIndex((r) => r.scale === result.scale);
      if (at === -1) results.push(result);
      else results[at] = { ...results[at], ...result };
    } finally {
      await db.end();
    }
  }
  results.sort((a, b) => a.scale - b.scale);
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(file, JSON.stringify(results, null, 2));
  log(`wrote ${path.relative(BENCH_DIR, file)}`);
  if (RUN_READS) {
    await mkdir(path.join(ROOT, 'docs', 'images'), { recursive: true });
    await writeFile(
      path.join(ROOT, 'docs', 'images', 'national-p99.svg'),
      p99Chart(results.filter((r) => r.rows !== undefined)),
    );
    log('wrote docs/images/national-p99.svg');
  }
}

try {
  await main();
} finally {
  await cleanup();
}
