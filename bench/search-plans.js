// The admin text search's candidate statements, side by side in PostgreSQL alone (no HTTP, no Node layers):
// the service's own statement (moduleListQuery, total known or not), and the shapes a lean implementation could
// use: `ILIKE` against `lower(col) LIKE lower($1)` on trigram indexes of lower(col), count-then-page against one
// statement with `count(*) OVER ()`. Each is run as a named prepared statement on one connection, interleaved
// round by round, and its plan is printed (EXPLAIN ANALYZE of the fifth execution, when the plan cache decides).
//
//   npm run build && node bench/search-plans.js            # demo data at scale 50 (100 000 modules)
//   node bench/search-plans.js --scale=10 --runs=200
//
// An embedded PostgreSQL in a temporary directory; nothing is kept. Not part of CI, asserts no time.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import console from 'node:console';
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { runMigrations } from '../dist/src/database/database.js';
import { startEmbeddedPostgres, releaseShutdownSignals } from '../dist/src/database/embedded-postgres.js';
import { moduleListQuery } from '../dist/src/course-modules/modules/course-modules.repository.js';
import { containsPattern } from '../dist/src/database/sql.js';
import { seed } from './lib/data.js';

const arg = (name, fallback) => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found ? Number(found.slice(name.length + 3)) : fallback;
};
const SCALE = arg('scale', 50);
const RUNS = arg('runs', 300);
const ROUNDS = arg('rounds', 3);

const MODULE_JSON = (
  r,
) => `(SELECT row_to_json(x)::text FROM (SELECT ${r}.id, ${r}.code, ${r}.year, ${r}.description,
  ${r}.credits, to_char(${r}.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  to_char(${r}.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at) x)`;

/** Lean candidates: `match` is the predicate on `m` with the pattern as $3; `order` the ORDER BY list. */
function candidates(order) {
  const ilike = `(m.code ILIKE $3 OR m.description ILIKE $3)`;
  const lower = `(lower(m.code) LIKE lower($3) OR lower(m.description) LIKE lower($3))`;
  const countThenPage = (match) => `SELECT (SELECT count(*) FROM modules m WHERE ${match}) AS total,
    (SELECT coalesce(string_agg(${MODULE_JSON('p')}, ','), '') FROM (
       SELECT m.* FROM modules m WHERE ${match} ORDER BY ${order} LIMIT $1 OFFSET $2) p) AS items`;
  const window = (
    match,
  ) => `SELECT max(total) AS total, coalesce(string_agg(${MODULE_JSON('p')}, ','), '') AS items
    FROM (SELECT m.*, count(*) OVER () AS total FROM modules m WHERE ${match} ORDER BY ${order} LIMIT $1 OFFSET $2) p`;
  const cte = (match) => `WITH hits AS MATERIALIZED (SELECT m.* FROM modules m WHERE ${match})
    SELECT (SELECT count(*) FROM hits) AS total,
      (SELECT coalesce(string_agg(${MODULE_JSON('p')}, ','), '') FROM (
         SELECT * FROM hits m ORDER BY ${order} LIMIT $1 OFFSET $2) p) AS items`;
  return {
    'ILIKE, count then page': countThenPage(ilike),
    'lower LIKE, count then page': countThenPage(lower),
    'ILIKE, count(*) OVER ()': window(ilike),
    'lower LIKE, count(*) OVER ()': window(lower),
    'ILIKE, materialized CTE': cte(ilike),
    'lower LIKE, materialized CTE': cte(lower),
  };
}

async function main() {
  releaseShutdownSignals();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mas-search-plans-'));
  const database = await startEmbeddedPostgres(dir, { log: () => undefined, error: console.error });
  try {
    await runMigrations(database.url);
    const seeded = await seed(database.url, { scale: SCALE, storageDir: dir });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const has = async (name) =>
      (await client.query(`SELECT 1 FROM pg_indexes WHERE indexname = $1`, [name])).rowCount === 1;
    // The lower(col) trigram indexes, unless the schema already has them.
    if (!(await has('ix_modules_code_lower_trgm')))
      await client.query(
        `CREATE INDEX ix_modules_code_lower_trgm ON modules USING gin (lower(code) gin_trgm_ops)`,
      );
    if (!(await has('ix_modules_description_lower_trgm')))
      await client.query(
        `CREATE INDEX ix_modules_description_lower_trgm ON modules USING gin (lower(description) gin_trgm_ops)`,
      );
    await client.query('VACUUM ANALYZE');
    const {
      rows: [stats],
    } = await client.query(`SELECT version FROM module_stats`);
    console.log(
      `${seeded.modules} modules; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' / ')}`,
    );

    const words = [
      { label: 'rare word', word: 'palaeography', sort: [], order: 'm.id ASC' },
      {
        label: 'common word, sort -year,code',
        word: 'Introduction',
        sort: [
          { column: 'm.year', descending: true },
          { column: 'm.code', descending: false },
        ],
        order: 'm.year DESC NULLS LAST, m.code ASC NULLS LAST, m.id ASC',
      },
    ];
    let n = 0;
    for (const { label, word, sort, order } of words) {
      const pattern = containsPattern(word);
      const statements = {};
      for (const known of [true, false]) {
        const q = moduleListQuery({
          query: word,
          sort,
          paging: { page: 1, perPage: 20, offset: 0 },
          knownVersion: known ? Number(stats.version) : -2,
        });
        statements[`service, total ${known ? 'known (no count)' : 'counted'}`] = {
          text: q.sql,
          values: q.params,
        };
      }
      for (const [name, text] of Object.entries(candidates(order)))
        statements[name] = { text, values: [20, 0, pattern] };
      const answers = new Map();
      for (const [name, s] of Object.entries(statements)) {
        s.name = `c${n++}`;
        for (let i = 0; i < 5; i++) await client.query({ name: s.name, text: s.text, values: s.values });
        const { rows } = await client.query({ name: s.name, text: s.text, values: s.values });
        answers.set(name, rows[0]);
      }
      const reference = answers.get('ILIKE, count then page');
      for (const [name, row] of answers) {
        if (row.items !== reference.items) throw new Error(`${label}: ${name} answers another page`);
        if (row.total !== null && String(row.total) !== String(reference.total))
          throw new Error(`${label}: ${name} counts ${row.total}, not ${reference.total}`);
      }
      const times = Object.fromEntries(Object.keys(statements).map((k) => [k, []]));
      for (let round = 0; round < ROUNDS; round++) {
        const order = Object.keys(statements);
        if (round % 2) order.reverse();
        for (const name of order) {
          const s = statements[name];
          const started = performance.now();
          for (let i = 0; i < RUNS; i++) await client.query({ name: s.name, text: s.text, values: s.values });
          times[name].push(((performance.now() - started) * 1000) / RUNS);
        }
      }
      console.log(
        `\n## ${label} (${reference.total} matches), µs per execution over ${ROUNDS} rounds of ${RUNS}`,
      );
      for (const [name, list] of Object.entries(times)) {
        const sorted = [...list].sort((a, b) => a - b);
        console.log(
          `${name.padEnd(40)} median ${sorted[Math.floor(sorted.length / 2)].toFixed(0).padStart(6)}  (${list.map((t) => t.toFixed(0)).join(', ')})`,
        );
      }
      if (process.argv.includes('--plans'))
        for (const [name, s] of Object.entries(statements)) {
          // EXPLAIN of the prepared statement's current plan (generic or custom, as the cache decided).
          await client.query(`PREPARE x${s.name} AS ${s.text}`);
          for (let i = 0; i < 6; i++)
            await client.query(
              `EXECUTE x${s.name}(${s.values.map((v) => client.escapeLiteral(String(v))).join(', ')})`,
            );
          const { rows } = await client.query(
            `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE x${s.name}(${s.values.map((v) => client.escapeLiteral(String(v))).join(', ')})`,
          );
          console.log(`\n### ${name}\n${rows.map((r) => r['QUERY PLAN']).join('\n')}`);
        }
    }
    console.log(
      `\nload average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' / ')}`,
    );
    await client.end();
  } finally {
    await database.stop();
    await rm(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

await main();
