// `npm run build && node bench/scim.js`: SCIM provisioning at scale (docs/provisioning.md, "Scale"). The built
// service runs in a child process (bench/service.js, as in bench/run.js) with SCIM on, against a database of
// 50 000 users; this process prints the query plans of the filter and uniqueness statements, the latency of
// single requests, and autocannon's figures for the lookup Entra ID and Okta make before every change
// (`GET /Users?filter=userName eq "…"`), a PATCH that changes a user, and Entra's re-send of unchanged values —
// each at full speed and at 250 requests per second (10× the 25 per second Entra's gallery checklist asks of an
// application per tenant). Without DATABASE_URL it starts an embedded PostgreSQL in a temporary directory.
import { createHash, randomBytes } from 'node:crypto';
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { database, startService } from './harness.js';

const USERS = 50_000;
const SECONDS = Number(process.env.SCIM_BENCH_SECONDS ?? 10);
const cleanups = [];
const out = (line) => process.stdout.write(`${line}\n`);

function quantiles(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2);
  return `median ${at(0.5)} ms, p95 ${at(0.95)} ms, p99 ${at(0.99)} ms`;
}

async function main() {
  const databaseUrl = await database(cleanups, 'mas_scim_bench');
  const { url, token: adminToken } = await startService(databaseUrl, cleanups, { SCIM_ENABLED: 'true' });
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  cleanups.push(() => client.end());
  const started = performance.now();
  await client.query(
    `INSERT INTO users (username, email, password_hash, admin, given_name, family_name, display_name, external_id)
     SELECT 'user' || g || '@uni.edu', 'user' || g || '@uni.edu', NULL, false, 'Given' || g, 'Family' || g,
            'Person ' || g, md5(g::text)
     FROM generate_series(1, $1::int) g`,
    [USERS],
  );
  await client.query('ANALYZE users');
  const token = `mas_${randomBytes(32).toString('base64url')}`;
  await client.query(
    `INSERT INTO integration_tokens (name, scopes, token_hash) VALUES ('bench', '{scim}', $1)`,
    [createHash('sha256').update(token).digest()],
  );
  const { rows } = await client.query(
    `SELECT min(id)::int AS first, count(*)::int AS n FROM users WHERE password_hash IS NULL`,
  );
  const [{ first, n }] = rows;
  out(`${n} users in ${Math.round(performance.now() - started)} ms`);

  out('\n## Query plans');
  const plans = [
    {
      title: 'filter userName eq',
      sql: 'SELECT id FROM users u WHERE lower(u.username) = lower($1)',
      params: ['USER25000@uni.edu'],
    },
    {
      title: 'filter emails.value eq',
      sql: 'SELECT id FROM users u WHERE lower(u.email) = lower($1)',
      params: ['user25000@uni.edu'],
    },
    {
      title: 'filter externalId eq',
      sql: 'SELECT id FROM users u WHERE u.external_id = $1',
      params: [createHash('md5').update('25000').digest('hex')],
    },
    {
      title: 'uniqueness (one of three)',
      sql: 'SELECT EXISTS (SELECT 1 FROM users WHERE lower(username) = lower($1) AND id IS DISTINCT FROM $2::bigint)',
      params: ['user1@uni.edu', first],
    },
  ];
  for (const { title, sql, params } of plans) {
    const plan = await client.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING ON) ${sql}`, params);
    out(`\n${title}:\n${plan.rows.map((row) => `    ${row['QUERY PLAN']}`).join('\n')}`);
  }

  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' };
  const lookup = (i) =>
    `/api/scim/v2/Users?filter=${encodeURIComponent(`userName eq "USER${(i % USERS) + 1}@uni.edu"`)}`;
  const change = (i) => ({
    path: `/api/scim/v2/Users/${first + (i % USERS)}`,
    body: JSON.stringify({ Operations: [{ op: 'replace', path: 'displayName', value: `Bench ${i}` }] }),
  });
  const unchanged = JSON.stringify({
    Operations: [
      { op: 'Replace', path: 'active', value: 'True' },
      { op: 'Replace', path: 'name.givenName', value: 'Given1' },
    ],
  });

  out('\n## One request at a time (200 each, after a warm-up)');
  await autocannon({
    url,
    connections: 4,
    duration: 2,
    headers,
    requests: [{ method: 'GET', path: lookup(7) }],
  });
  const singles = [
    {
      title: 'GET /Users?filter=userName eq',
      send: (i) => globalThis.fetch(url + lookup(i * 97), { headers }),
    },
    {
      title: 'PATCH a change (audit + change event)',
      send: (i) => globalThis.fetch(url + change(i).path, { method: 'PATCH', headers, body: change(i).body }),
    },
    {
      // The user route's own update, for comparison: the same write, audit event and change event.
      title: 'PUT /api/users/{id} changing display_name (not SCIM)',
      send: (i) =>
        globalThis.fetch(`${url}/api/users/${first + 1000 + i}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ display_name: `Admin ${i}` }),
        }),
    },
    {
      title: 'PATCH unchanged (Entra re-send)',
      send: () =>
        globalThis.fetch(`${url}/api/scim/v2/Users/${first}`, { method: 'PATCH', headers, body: unchanged }),
    },
  ];
  for (const { title, send } of singles) {
    const times = [];
    for (let i = 0; i < 200; i++) {
      const at = performance.now();
      const res = await send(i);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${title}: ${res.status}`);
      times.push(performance.now() - at);
    }
    out(`- ${title}: ${quantiles(times)}`);
  }

  out(`\n## Under load (autocannon, ${SECONDS} s each)`);
  const scenarios = [
    { title: 'GET /Users?filter=userName eq', make: (i) => ({ method: 'GET', path: lookup(i) }) },
    { title: 'PATCH a change', make: (i) => ({ method: 'PATCH', ...change(i + 100_000) }) },
    {
      title: 'PATCH unchanged',
      make: () => ({ method: 'PATCH', path: `/api/scim/v2/Users/${first}`, body: unchanged }),
    },
  ];
  for (const { title, make } of scenarios) {
    for (const rate of [undefined, 250]) {
      let i = 0;
      const result = await autocannon({
        url,
        connections: 16,
        duration: SECONDS,
        headers,
        ...(rate ? { overallRate: rate } : {}),
        requests: [{ setupRequest: (request) => ({ ...request, ...make(i++) }) }],
      });
      const bad = result.non2xx + result.errors + result.timeouts;
      out(
        `- ${title}, ${rate ? `${rate} req/s offered` : 'full speed'}: ${Math.round(result.requests.average)} req/s, ` +
          `latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms` +
          (bad ? `, ${bad} failed` : ''),
      );
    }
  }
}

try {
  await main();
} finally {
  for (const cleanup of cleanups.reverse())
    await cleanup().catch((error) => process.stderr.write(`${String(error)}\n`));
}
process.exit(0);
