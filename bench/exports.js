// `npm run build && node bench/exports.js`: the LMS roster exports (docs/lms-exports.md) of one academic year,
// against a lean baseline in the same run. For each size (`--sizes=`, memberships, default 50000,500000) a year of
// size ÷ 250 modules with 250 members each (a lecturer, an assistant lecturer, a tutor, students; some upcoming,
// some completed) over 50 000 users is written by SQL; then each profile's zip is read over HTTP from the built
// service (bench/service.js): time to last byte, zip bytes, the service's resident memory before (idle) and its
// peak while the export ran (VmHWM, reset before each export), after one untimed export of each profile. The baseline reads the same membership rows joined
// to users and modules with `pg-query-stream` (a cursor, 1 000 rows a fetch) in this process, and, where `psql` is
// on the PATH, as `COPY (…) TO STDOUT (FORMAT csv)`.
//
//   node bench/exports.js                      embedded PostgreSQL in a temporary directory
//   DATABASE_URL=postgres://… node bench/exports.js   a database of its own on that server, dropped afterwards
import { spawn, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import QueryStream from 'pg-query-stream';
import { database, runWithCleanups, startService, writeResults } from './harness.js';
import { arg, out } from './lib/options.js';
import { loadAverage, peakRssMiB, resetPeakRss } from './lib/measure.js';

const SIZES = arg('sizes', '50000,500000').split(',').map(Number);
const PER_MODULE = 250;
const USERS = 50_000;
const FIRST_YEAR = 2031;
const PROFILES = [
  ['oneroster', '/api/exports/oneroster-1.1.zip'],
  ['canvas', '/api/exports/canvas-sis.zip'],
];
const cleanups = [];

async function rssMiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number((Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) / 1024).toFixed(1));
}

// The rows every enrolment line is made from: membership, its user, its module; the exports' effective-status filter.
const baselineSql = (year) => `
  SELECT r.module_id, r.user_id, r.role, membership_effective(r.status, r.starts_at, r.ends_at, now()) AS status,
         r.starts_at, r.ends_at, u.username, u.email, u.given_name, u.family_name, u.external_id, u.active, m.code
  FROM user_module_roles r JOIN modules m ON m.id = r.module_id JOIN users u ON u.id = r.user_id
  WHERE m.year = ${year}
    AND membership_effective(r.status, r.starts_at, r.ends_at, now()) IN ('active', 'upcoming', 'completed')
  ORDER BY r.module_id, r.user_id`;

async function seed(client, year, memberships) {
  const modules = Math.ceil(memberships / PER_MODULE);
  await client.query(
    `INSERT INTO modules (code, year, description, credits)
     SELECT 'EX' || lpad(n::text, 5, '0'), $2, 'Export bench ' || n, 15 FROM generate_series(1, $1) n`,
    [modules, year],
  );
  // Member k of the module's 250: 0 lecturer, 1 assistant lecturer, 2 tutor, else a student; of every 50, one
  // completed and one upcoming (starts in a month); users taken in turn, so each holds several memberships.
  await client.query(
    `INSERT INTO user_module_roles (user_id, module_id, role, status, starts_at, ends_at)
     SELECT u.id, m.id,
            (CASE k WHEN 0 THEN 'Lecturer' WHEN 1 THEN 'AssistantLecturer' WHEN 2 THEN 'Tutor' ELSE 'Student' END)::module_role,
            (CASE WHEN k % 50 = 7 THEN 'completed' ELSE 'active' END)::membership_status,
            CASE WHEN k % 50 = 8 THEN now() + interval '30 days' ELSE now() - interval '60 days' END,
            CASE WHEN k % 50 = 9 THEN now() + interval '200 days' END
     FROM (SELECT id, row_number() OVER (ORDER BY id) - 1 AS i FROM modules WHERE year = $1) m
     CROSS JOIN generate_series(0, $2 - 1) k
     JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS j FROM users WHERE username LIKE 'ex%') u
       ON u.j = (m.i * $2 + k) % $3`,
    [year, PER_MODULE, USERS],
  );
}

/** Reads `route` to its last byte; the time, the bytes, and the service's memory before and at its peak. */
async function exportOnce(service, route) {
  await resetPeakRss(service.pid);
  const idle = await rssMiB(service.pid);
  const started = performance.now();
  const response = await globalThis.fetch(service.url + route, {
    headers: { authorization: `Bearer ${service.token}` },
  });
  if (response.status !== 200) throw new Error(`${route}: ${response.status} ${await response.text()}`);
  let bytes = 0;
  for await (const chunk of response.body) bytes += chunk.length;
  const ms = performance.now() - started;
  return { ms: Math.round(ms), bytes, idleRssMiB: idle, peakRssMiB: await peakRssMiB(service.pid) };
}

async function cursorOnce(client, year) {
  const started = performance.now();
  let rows = 0;
  for await (const row of client.query(new QueryStream(baselineSql(year), [], { batchSize: 1000 })))
    if (row) rows += 1;
  return { ms: Math.round(performance.now() - started), rows };
}

async function copyOnce(databaseUrl, year) {
  const started = performance.now();
  const child = spawn(
    'psql',
    [
      databaseUrl,
      '-X',
      '-q',
      '-c',
      `COPY (${baselineSql(year).replace(/\s+/g, ' ')}) TO STDOUT (FORMAT csv)`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let bytes = 0;
  for await (const chunk of child.stdout) bytes += chunk.length;
  const code = await new Promise((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`psql COPY exited ${code}`);
  return { ms: Math.round(performance.now() - started), bytes };
}

async function main() {
  const databaseUrl = await database(cleanups, 'mas_exports_bench');
  const service = await startService(databaseUrl, cleanups);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  cleanups.push(() => client.end());
  const hasPsql = spawnSync('psql', ['--version']).status === 0;
  out(`load average at start: ${loadAverage()}`);

  let t0 = performance.now();
  await client.query(
    `INSERT INTO users (username, email, given_name, family_name, external_id, active)
     SELECT 'ex' || n, 'ex' || n || '@example.edu', 'Given' || n, 'Family' || (n % 997), 'ext-' || n, n % 40 <> 0
     FROM generate_series(1, $1) n`,
    [USERS],
  );
  const years = SIZES.map((size, i) => ({ size, year: FIRST_YEAR + i }));
  for (const { size, year } of years) await seed(client, year, size);
  await client.query('ANALYZE');
  out(
    `seeded ${USERS} users and ${SIZES.join(' + ')} memberships in ${Math.round(performance.now() - t0)} ms`,
  );

  // One untimed export of each profile first, so the first measured one does not pay for compiling the code path.
  for (const [, route] of PROFILES) await exportOnce(service, `${route}?year=${years[0].year}`);
  const results = [];
  for (const { year } of years) {
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM user_module_roles r JOIN modules m ON m.id = r.module_id WHERE m.year = $1`,
      [year],
    );
    const cursor = await cursorOnce(client, year);
    const copy = hasPsql ? await copyOnce(databaseUrl, year) : undefined;
    const entry = { memberships: rows[0].n, exportedRows: cursor.rows, cursor, copy, profiles: {} };
    out(`\n## ${rows[0].n} memberships (year ${year}), ${cursor.rows} exported`);
    out(
      `  baseline: pg-query-stream cursor ${cursor.ms} ms` +
        (copy ? `; COPY … TO STDOUT (psql) ${copy.ms} ms, ${copy.bytes} bytes` : ''),
    );
    for (const [profile, route] of PROFILES) {
      const result = await exportOnce(service, `${route}?year=${year}`);
      entry.profiles[profile] = result;
      const lean = copy?.ms ?? cursor.ms;
      out(
        `  ${profile}: ${result.ms} ms to the last byte (${(result.ms / lean).toFixed(2)}× the baseline), ` +
          `${result.bytes} bytes; service RSS idle ${result.idleRssMiB} MiB, peak ${result.peakRssMiB} MiB`,
      );
    }
    results.push(entry);
  }
  out(`\nload average at end: ${loadAverage()}`);

  const rows = results.flatMap((entry) =>
    PROFILES.map(([profile]) => {
      const result = entry.profiles[profile];
      const lean = entry.copy?.ms ?? entry.cursor.ms;
      return {
        route: `${profile}, ${entry.memberships.toLocaleString('en')}: ${result.ms} ms ÷ ${lean} ms`,
        ratio: result.ms / lean,
        target: 0,
      };
    }),
  );
  await writeResults(
    'exports',
    { loadAverage: loadAverage(), results },
    rows,
    {
      title: 'LMS export, time to last byte ÷ COPY … TO STDOUT of the same rows',
      marks: [[1, '1.0']],
      legend: 'lower is better: 1 = as fast as streaming the raw rows out of PostgreSQL',
    },
    out,
  );
}

await runWithCleanups(main, cleanups);
