// The LMS roster exports (docs/lms-exports.md) as bench/exports.js and bench/national.js measure them: a profile's
// zip read over HTTP to its last byte with the service's peak resident size, and the lean baseline of the same
// membership rows (a `pg-query-stream` cursor in this process, and `COPY (…) TO STDOUT (FORMAT csv)` through psql).
import { spawn, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import QueryStream from 'pg-query-stream';
import { peakRssMiB, resetPeakRss } from './measure.js';

/** Each profile's name in the results and its route (`?year=` and the rest are added by the caller). */
export const PROFILES = [
  ['oneroster', '/api/exports/oneroster-1.1.zip'],
  ['canvas', '/api/exports/canvas-sis.zip'],
];

/** The effective statuses OneRoster exports by default (Canvas adds `inactive`). */
const EXPORTED_STATUSES = ['active', 'upcoming', 'completed'];

/**
 * The rows every enrolment line is made from: membership, its user, its module, in the exports' order; the
 * exports' effective-status filter.
 */
export const baselineSql = (year) => `
  SELECT r.module_id, r.user_id, r.role, membership_effective(r.status, r.starts_at, r.ends_at, now()) AS status,
         r.starts_at, r.ends_at, u.username, u.email, u.given_name, u.family_name, u.external_id, u.active, m.code
  FROM user_module_roles r JOIN modules m ON m.id = r.module_id JOIN users u ON u.id = r.user_id
  WHERE m.year = ${Number(year)}
    AND membership_effective(r.status, r.starts_at, r.ends_at, now()) IN (${EXPORTED_STATUSES.map((s) => `'${s}'`).join(', ')})
  ORDER BY r.module_id, r.user_id`;

/** A process's resident size now (VmRSS), in MiB. */
export async function rssMiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number((Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) / 1024).toFixed(1));
}

/**
 * Reads `route` of `service` ({ url, pid }) with the bearer `token` to its last byte: the time, the bytes, the
 * service's memory before (idle) and its peak meanwhile (VmHWM, reset first). Anything but a 200 throws.
 */
export async function exportOnce(service, route, token) {
  await resetPeakRss(service.pid);
  const idle = await rssMiB(service.pid);
  const started = performance.now();
  const response = await globalThis.fetch(service.url + route, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (response.status !== 200) throw new Error(`${route}: ${response.status} ${await response.text()}`);
  let bytes = 0;
  for await (const chunk of response.body) bytes += chunk.length;
  const ms = performance.now() - started;
  return { ms: Math.round(ms), bytes, idleRssMiB: idle, peakRssMiB: await peakRssMiB(service.pid) };
}

/** The baseline's rows through a cursor on `client` (1 000 rows a fetch): the time and the rows. */
export async function cursorOnce(client, year) {
  const started = performance.now();
  let rows = 0;
  for await (const row of client.query(new QueryStream(baselineSql(year), [], { batchSize: 1000 })))
    if (row) rows += 1;
  return { ms: Math.round(performance.now() - started), rows };
}

/** Whether `psql` is on the PATH (the COPY baseline needs it). */
export const hasPsql = () => spawnSync('psql', ['--version']).status === 0;

/** The baseline's rows as `COPY (…) TO STDOUT (FORMAT csv)` through psql, read to the end: the time and the bytes. */
export async function copyOnce(databaseUrl, year) {
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
  const closed = new Promise((resolve) => child.once('close', resolve));
  let bytes = 0;
  for await (const chunk of child.stdout) bytes += chunk.length;
  const code = await closed;
  if (code !== 0) throw new Error(`psql COPY exited ${code}`);
  return { ms: Math.round(performance.now() - started), bytes };
}
