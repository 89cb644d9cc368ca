import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startTestApp, TEST_JWT_SECRET, testDatabaseUrl } from './support/app.js';
import { makeModule, makeUser, tokenFor } from './support/factories.js';
import { waitFor } from './support/wait-for.js';

/**
 * The single read of a module with tens of thousands of people, many at once, on the service as its own process:
 * the answer budget (LARGE_ANSWER_BUDGET_MB) keeps the process's peak resident memory bounded however many
 * reads arrive together (docs/decisions.md, "Large answers"); without it each read in flight holds its answer.
 * The module is as large as the largest of `seed:demo --scale 1000` (57 804 people, a 15.7 MB answer), the budget
 * is the shipped default, and the bound is the one the deployment's 512 Mi limit needs with room to spare.
 */
const MAIN = path.resolve('dist/src/main.js');
const MEMBERS = 57_804;
const CONCURRENT = 32;
const BUDGET_MB = 128;
const PEAK_BOUND_MIB = 400;
const MIB = 1024 * 1024;

/** A field of /proc/<pid>/status, in bytes. */
async function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
}

/** The whole answer of a GET: its status and its length in bytes (the body is not kept). */
function read(url: string, route: string, token: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}${route}`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () => resolve({ status: response.statusCode!, bytes }));
      })
      .on('error', reject);
  });
}

describe('large single reads, many at once', () => {
  let dataDir: string;
  const children: ChildProcess[] = [];
  let token: string;
  let moduleId: number;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-large-answers-'));
    const fixtures = await startTestApp();
    try {
      await fixtures.reset();
      token = tokenFor(await makeUser(fixtures.dataSource, { admin: true }));
      moduleId = (await makeModule(fixtures.dataSource)).id;
    } finally {
      await fixtures.close();
    }
    // Through a connection of the test's own, without the service's statement timeout: the harness's work.
    const db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    try {
      await db.query(
        `INSERT INTO users (username, email, password_hash, given_name, family_name)
         SELECT 'large-answer-student-' || n, 'large-answer-student-' || n || '@example.edu', 'x', 'Given', 'Family'
         FROM generate_series(1, $1::int) AS n`,
        [MEMBERS],
      );
      await db.query(
        `INSERT INTO user_module_roles (user_id, module_id, role)
         SELECT id, $1, 'Student' FROM users WHERE username LIKE 'large-answer-student-%'`,
        [moduleId],
      );
      await db.query(`ANALYZE users, user_module_roles`);
    } finally {
      await db.end();
    }
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  /** The service as its own process on the test database, with this answer budget. */
  async function startChild(budgetMb: number): Promise<{ child: ChildProcess; url: string }> {
    const { DATABASE_URL: _url, ...rest } = process.env;
    const child = spawn(process.execPath, [MAIN], {
      env: {
        ...rest,
        NODE_ENV: 'production',
        DATABASE_URL: testDatabaseUrl(),
        JWT_SECRET: TEST_JWT_SECRET,
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        LARGE_ANSWER_BUDGET_MB: String(budgetMb),
        DB_STATEMENT_TIMEOUT_MS: '60000',
        DB_QUERY_TIMEOUT_MS: '65000',
        DB_CONNECT_TIMEOUT_MS: '60000',
        // Reads waiting for the budget on a busy machine: the request bound is not what is measured here.
        REQUEST_TIMEOUT_MS: '300000',
        // The container's allocator settings (Dockerfile).
        MALLOC_ARENA_MAX: '2',
        MALLOC_MMAP_THRESHOLD_: '131072',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const url = await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`service exited:\n${output}`);
        return /listening on (http:\/\/[^/"\s]+)\/api/.exec(output)?.[1];
      },
      { timeoutMs: 60_000, what: 'the service to listen', seen: () => output },
    );
    return { child, url };
  }

  /** The process's peak resident memory over CONCURRENT reads sent at once, after one read on its own. */
  async function peakOverReads(budgetMb: number): Promise<{ rest: number; peak: number; bytes: number }> {
    const { child, url } = await startChild(budgetMb);
    const route = `/api/modules/${moduleId}`;
    const first = await read(url, route, token);
    expect(first.status).toBe(200);
    const rest = await statusBytes(child.pid!, 'VmRSS');
    // The peak from here on (Linux: 5 resets VmHWM to the current size).
    await writeFile(`/proc/${child.pid}/clear_refs`, '5');
    const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => read(url, route, token)));
    const peak = await statusBytes(child.pid!, 'VmHWM');
    child.kill('SIGKILL');
    expect(answers.filter((answer) => answer.status !== 200 || answer.bytes !== first.bytes)).toEqual([]);
    return { rest, peak, bytes: first.bytes };
  }

  it(`keeps ${CONCURRENT} concurrent reads of a ${MEMBERS}-person module within the answer budget`, async () => {
    const bounded = await peakOverReads(BUDGET_MB);
    const unbounded = await peakOverReads(4096);
    const mib = (bytes: number) => Math.round(bytes / MIB);
    process.stdout.write(
      `answer ${mib(bounded.bytes)} MiB; budget ${BUDGET_MB} MiB: rest ${mib(bounded.rest)}, peak ${mib(bounded.peak)} MiB; ` +
        `no budget: rest ${mib(unbounded.rest)}, peak ${mib(unbounded.peak)} MiB\n`,
    );
    // The budget plus the process at rest, with room for the garbage a full collection has not taken yet.
    expect(bounded.peak).toBeLessThan(bounded.rest + (BUDGET_MB + 100) * MIB);
    expect(bounded.peak).toBeLessThan(PEAK_BOUND_MIB * MIB);
    // Without the budget the same reads go higher (the pool of connections bounds them too, less tightly).
    expect(unbounded.peak - unbounded.rest).toBeGreaterThan(bounded.peak - bounded.rest);
  }, 300_000);
});
