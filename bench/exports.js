// `npm run build && node bench/exports.js`: the LMS roster exports (docs/lms-exports.md) of one academic year,
// against a lean baseline in the same run. For each size (`--sizes=`, memberships, default 50000,500000) a year of
// size ÷ 250 modules with 250 members each (a lecturer, an assistant lecturer, a tutor, students; some upcoming,
// some completed) over 50 000 users is written by SQL; then each profile's zip is read over HTTP from the built
// service (bench/service.js): time to last byte, zip bytes, the service's resident memory before (idle) and its
// peak while the export ran (VmHWM, reset before each export), after one untimed export of each profile. The baseline reads the same membership rows joined
// to users and modules with `pg-query-stream` (a cursor, 1 000 rows a fetch) in this process, and, where `psql` is
// on the PATH, as `COPY (…) TO STDOUT (FORMAT csv)`. The export and the baseline are lib/exports.js's, which
// bench/national.js measures on the seeded databases too.
//
//   node bench/exports.js                      embedded PostgreSQL in a temporary directory
//   DATABASE_URL=postgres://… node bench/exports.js   a database of its own on that server, dropped afterwards
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { database, runWithCleanups, startService, writeResults } from './harness.js';
import { copyOnce, cursorOnce, exportOnce, hasPsql as psqlOnPath, PROFILES } from './lib/exports.js';
import { arg, out } from './lib/options.js';
import { loadAverage } from './lib/measure.js';

const SIZES = arg('sizes', '50000,500000').split(',').map(Number);
const PER_MODULE = 250;
const USERS = 50_000;
const FIRST_YEAR = 2031;
const cleanups = [];

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

async function main() {
  const databaseUrl = await database(cleanups, 'mas_exports_bench');
  const service = await startService(databaseUrl, cleanups);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  cleanups.push(() => client.end());
  const hasPsql = psqlOnPath();
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
  for (const [, route] of PROFILES)
    await exportOnce(service, `${route}?year=${years[0].year}`, service.token);
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
      const result = await exportOnce(service, `${route}?year=${year}`, service.token);
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
