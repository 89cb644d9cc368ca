// The national scale (bench/README.md, "National scale"): the people lists and the searches on databases seeded
// beforehand by `npm run seed:demo -- --scale N` (scale 1 000 takes minutes and 3.2 GB, so it is seeded once and
// reused), the service and the lean bare implementation side by side on each, 16 connections. Writes
// bench/results/national.json and docs/images/national-p99.svg (p99 against the number of users, both sides).
//
//   NATIONAL_DATABASES="50=postgres://…/s50 200=postgres://…/s200 1000=postgres://…/s1000" node bench/national.js
//
// Needs a build. A token is minted for the seeded database's first administrator with its JWT secret, so no
// password is needed; the routes are proved to give the same `total` on both sides before they are timed.
import { Buffer } from 'node:buffer';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import process from 'node:process';
import pg from 'pg';
import { cleanup, cleanUpOnSignals } from './lib/cleanup.js';
import { call, load } from './lib/measure.js';
import { BENCH_DIR, log, RESULTS_DIR, ROOT } from './lib/options.js';
import { startServers } from './lib/servers.js';

const SECONDS = Number(process.env.NATIONAL_SECONDS ?? 5);
const CONNECTIONS = 16;

const base64url = (value) => Buffer.from(value).toString('base64url');
function token(secret, sub) {
  const iat = Math.floor(Date.now() / 1000);
  const head = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = base64url(JSON.stringify({ sub, admin: true, iat, exp: iat + 3600 }));
  const signature = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${signature}`;
}

/** The measured routes at a scale: the biggest module's id and a family name come from the data. */
async function routesOf(databaseUrl) {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const [admin] = (await db.query(`SELECT id FROM users WHERE admin ORDER BY id LIMIT 1`)).rows;
    const [counts] = (
      await db.query(
        `SELECT (SELECT total FROM user_stats)::int AS users, (SELECT total FROM module_stats)::int AS modules`,
      )
    ).rows;
    // The module with the most people (its members read through the index on module and role).
    const [biggest] = (
      await db.query(
        `SELECT module_id AS id, count(*)::int AS members FROM user_module_roles GROUP BY module_id ORDER BY 2 DESC, 1 LIMIT 1`,
      )
    ).rows;
    const big = `/api/modules/${biggest.id}`;
    return {
      admin: Number(admin.id),
      biggest,
      users: counts.users,
      modules: counts.modules,
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
  } finally {
    await db.end();
  }
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

async function main() {
  cleanUpOnSignals();
  const databases = (process.env.NATIONAL_DATABASES ?? '').split(/\s+/).filter(Boolean);
  if (databases.length === 0) throw new Error('NATIONAL_DATABASES is not set (see the head of this file)');
  const secret = randomBytes(24).toString('hex');
  const results = [];
  for (const entry of databases) {
    const [scale, url] = entry.split(/=(.*)/s);
    const { admin, users, modules, biggest, routes } = await routesOf(url);
    log(`scale ${scale}: ${users} users, ${modules} modules, the biggest module ${biggest.members} people`);
    const { service, bare } = await startServers(url, secret);
    const headers = { authorization: `Bearer ${token(secret, admin)}` };
    const rows = [];
    for (const route of routes) {
      const sides = route.both ? { service, bare } : { service };
      const totals = await Promise.all(
        Object.values(sides).map((side) => total(side.url, route.path, headers)),
      );
      if (new Set(totals).size !== 1) throw new Error(`${route.path}: totals differ ${totals.join(' / ')}`);
      const row = { name: route.name, total: totals[0] };
      for (const [side, server] of Object.entries(sides)) {
        await load(server.url, { path: route.path, headers, route: route.name }, 1, CONNECTIONS, server.pid);
        row[side] = await load(
          server.url,
          { path: route.path, headers, route: route.name },
          SECONDS,
          CONNECTIONS,
          server.pid,
        );
      }
      log(
        `  ${route.name}: service p50 ${row.service.p50} p99 ${row.service.p99} (${row.service.rps.toFixed(0)}/s)` +
          (row.bare ? `, bare p50 ${row.bare.p50} p99 ${row.bare.p99} (${row.bare.rps.toFixed(0)}/s)` : ''),
      );
      rows.push(row);
    }
    await service.stop();
    await bare.stop();
    results.push({ scale: Number(scale), users, modules, biggestModule: biggest.members, rows });
  }
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, 'national.json'), JSON.stringify(results, null, 2));
  await mkdir(path.join(ROOT, 'docs', 'images'), { recursive: true });
  await writeFile(path.join(ROOT, 'docs', 'images', 'national-p99.svg'), p99Chart(results));
  log(
    `wrote ${path.relative(BENCH_DIR, path.join(RESULTS_DIR, 'national.json'))} and docs/images/national-p99.svg`,
  );
}

try {
  await main();
} finally {
  await cleanup();
}
