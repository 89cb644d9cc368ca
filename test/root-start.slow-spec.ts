import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeWhenAvailable, rootRequirement } from './support/requires.js';

/**
 * Started as root, the embedded PostgreSQL runs as the `postgres` user. In a directory that user cannot enter
 * (a container's /root is 0700) the service must stop at once with one sentence saying what to do — not a
 * `spawn … EACCES` stack trace — and in a data directory it can reach it must work.
 */
const MAIN = path.resolve('dist/src/main.js');

function run(dataDir: string, waitFor: RegExp | undefined, timeoutMs: number) {
  const { DATABASE_URL: _url, JWT_SECRET: _secret, ...rest } = process.env;
  const child = spawn(process.execPath, [MAIN], {
    env: { ...rest, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let ready: number | undefined;
  let checking = false;
  const watch = setInterval(() => {
    const match = waitFor?.exec(stdout);
    if (!match || checking) return;
    checking = true;
    void (async () => {
      ready = (await fetch(`${match[1]}/api/health/ready`).catch(() => undefined))?.status;
      child.kill('SIGTERM');
    })();
  }, 50);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise<{ code: number | null; stdout: string; stderr: string; ready?: number }>((resolve) => {
    child.once('exit', (code) => {
      clearInterval(watch);
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ready });
    });
  });
}

describeWhenAvailable(rootRequirement(), 'starting as root', () => {
  let privateDir: string;

  beforeAll(async () => {
    privateDir = await mkdtemp(path.join(tmpdir(), 'mas-root-'));
    await chmod(privateDir, 0o700);
  });
  afterAll(() => rm(privateDir, { recursive: true, force: true }));

  it('under a 0700 directory: one sentence naming the directory and the ways out, exit 1, no stack trace', async () => {
    const started = Date.now();
    const result = await run(path.join(privateDir, 'data'), undefined, 30_000);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toEqual([
      `The embedded PostgreSQL cannot start: the service runs as root, so PostgreSQL must run as the "postgres" ` +
        `user, who cannot enter ${privateDir} to reach the data directory ${path.join(privateDir, 'data')}; run ` +
        `the service as an ordinary user, set DATA_DIR to a directory other users can enter, or set ` +
        `DATABASE_URL to an existing PostgreSQL server.`,
    ]);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(result.stderr).not.toContain('EACCES');
    // Nothing was initialised: it stopped before initdb.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('with DATA_DIR in a directory the postgres user can enter, it starts and answers', async () => {
    const reachable = path.join(privateDir, 'open');
    await mkdir(reachable);
    await chmod(privateDir, 0o711);
    try {
      const result = await run(path.join(reachable, 'data'), /listening on (http:\/\/[^/"\s]+)\/api/, 60_000);
      expect(result.ready).toBe(200);
      // SIGTERM after the check: a clean stop.
      expect(result.code).toBe(0);
    } finally {
      await chmod(privateDir, 0o700);
    }
  });
});
