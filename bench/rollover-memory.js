// The rollover's memory (docs/api.md §13): the built service in a child process (bench/service.js) on a database
// of its own, with ROLLOVER_MODULES modules (1 000) of one year and ROLLOVER_STUDENTS students (500) in each,
// written by SQL directly; then one `POST /api/modules/rollover` with `roles: ["Student"]` copies all of them
// (500 000 role rows). Prints the service's resident memory before, its peak while the rollover ran (VmHWM), and
// the rollover's time. DATABASE_URL: a fresh database on that server (dropped afterwards); else embedded.
//   npm run build && node bench/rollover-memory.js
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createScratchDatabase } from '../dist/src/database/scratch-database.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const MODULES = Number(process.env.ROLLOVER_MODULES ?? 1000);
const STUDENTS = Number(process.env.ROLLOVER_STUDENTS ?? 500);
const FROM = 2030;
const PASSWORD = 'rollover-admin-password-0123';
const log = (message) => process.stderr.write(`[rollover-memory] ${message}\n`);

const cleanups = [];
async function cleanup() {
  while (cleanups.length > 0)
    await cleanups
      .pop()()
      .catch((error) => log(`clean-up: ${error.message}`));
}

async function status(pid) {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)[1]);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

async function main() {
  const external = process.env.DATABASE_URL?.trim();
  if (!external) throw new Error('set DATABASE_URL to a PostgreSQL server (a fresh database is made on it)');
  const database = await createScratchDatabase(external, 'mas_rollover_memory');
  cleanups.push(database.drop);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mas-rollover-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const child = fork(path.join(BENCH_DIR, 'service.js'), [], {
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      NODE_ENV: 'production',
      DATA_DIR: dataDir,
      JWT_SECRET: randomBytes(32).toString('base64url'),
      LOG_LEVEL: 'warn',
      ADMIN_PASSWORD: PASSWORD,
      SWAGGER_ENABLED: 'false',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.send('stop');
    await exited;
  });
  const baseUrl = await new Promise((resolve, reject) => {
    child.once('message', (message) => resolve(message.url));
    void exited.then((code) => reject(new Error(`the service exited (${code})`)));
  });

  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  let started = Date.now();
  await db.query(
    `INSERT INTO users (username, email, password_hash)
     SELECT 'student' || n, 'student' || n || '@example.edu', 'x' FROM generate_series(1, $1) n`,
    [STUDENTS],
  );
  await db.query(
    `INSERT INTO modules (code, year, description, credits)
     SELECT 'RM' || lpad(n::text, 4, '0'), $2, 'Rollover memory', 10 FROM generate_series(1, $1) n`,
    [MODULES, FROM],
  );
  await db.query(
    `INSERT INTO user_module_roles (user_id, module_id, role)
     SELECT u.id, m.id, 'Student' FROM modules m CROSS JOIN users u
     WHERE m.year = $1 AND u.username LIKE 'student%'`,
    [FROM],
  );
  await db.query('ANALYZE');
  const [{ rows }] = [await db.query(`SELECT count(*)::int AS rows FROM user_module_roles`)];
  log(`seeded ${rows[0].rows} role rows in ${Date.now() - started} ms`);
  await db.end();

  const login = await globalThis.fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  const { token } = (await login.json()).data;
  const before = await status(child.pid);
  let peakSampled = before.rss;
  let running = true;
  const sampler = (async () => {
    while (running) {
      peakSampled = Math.max(peakSampled, (await status(child.pid)).rss);
      await sleep(20);
    }
  })();
  started = Date.now();
  const res = await globalThis.fetch(`${baseUrl}/api/modules/rollover`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ from_year: FROM, to_year: FROM + 1, roles: ['Student'] }),
  });
  const body = await res.json();
  const ms = Date.now() - started;
  running = false;
  await sampler;
  const after = await status(child.pid);
  if (res.status !== 201) throw new Error(`rollover: ${res.status} ${JSON.stringify(body)}`);
  const result = {
    modules: body.data.created,
    members_copied: body.data.members_copied,
    rollover_ms: ms,
    rss_before_mib: Math.round(before.rss),
    // Sampled every 20 ms while the rollover ran; VmHWM is the process's peak since it started.
    peak_rss_during_mib: Math.round(peakSampled),
    hwm_before_mib: Math.round(before.hwm),
    hwm_after_mib: Math.round(after.hwm),
    rss_after_mib: Math.round(after.rss),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

try {
  await main();
} finally {
  await cleanup();
}
