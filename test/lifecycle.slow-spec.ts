import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { client } from './support/http.js';
import { isAlive, runServiceUntilExit, serviceEnv, startServiceProcess } from './support/processes.js';
import { refusesConnections } from './support/sockets.js';
import { waitFor } from './support/wait-for.js';

// The built service (`npm run test:slow` builds first), run as a user would run it, on the embedded database.
const ADMIN_PASSWORD = 'lifecycle-admin-password';

const env = (dataDir: string, extra: Record<string, string> = {}) =>
  serviceEnv({ DATA_DIR: dataDir, ADMIN_PASSWORD, ...extra });

const start = (dataDir: string) => startServiceProcess(env(dataDir), 30_000);

async function login(url: string, password = ADMIN_PASSWORD) {
  return client(url).post('/api/auth/login', { body: { username: 'admin', password } });
}

describe('the service as a process', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-lifecycle-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('starts an embedded PostgreSQL, keeps data and secret across restarts, and shuts down gracefully', async () => {
    const first = await start(dataDir);
    let token: string;
    try {
      expect((await client(first.url).get('/api/health/ready')).status).toBe(200);
      const session = await login(first.url);
      expect(session.status).toBe(200);
      token = session.body.data.token;
      const me = await client(first.url).get('/api/auth/me', {
        token,
        headers: { 'x-request-id': 'trace-me-123' },
      });
      expect(me.body.data.username).toBe('admin');
      expect(me.headers.get('x-request-id')).toBe('trace-me-123');

      // The cluster listens on loopback only, with a password of its own kept beside it (mode 0600).
      expect((await stat(path.join(dataDir, 'postgres-password'))).mode & 0o077).toBe(0);
      expect((await stat(path.join(dataDir, 'jwt-secret'))).mode & 0o077).toBe(0);
      const postmaster = (await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split(
        '\n',
      );
      const postgresPid = Number(postmaster[0]);
      expect(postmaster[4]).toBe(''); // no Unix socket directory
      expect(postmaster[5]).toBe('127.0.0.1');
      expect(isAlive(postgresPid)).toBe(true);

      // An in-flight request (its body half sent) is finished after SIGTERM; new connections are refused.
      const { port, hostname } = new URL(first.url);
      const body = JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD });
      const inFlight = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const request = http.request(
          {
            host: hostname,
            port,
            method: 'POST',
            path: '/api/auth/login',
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              // The server's 100 Continue says it has read the head: the request is in flight from then on.
              expect: '100-continue',
            },
          },
          (response) => {
            let text = '';
            response.on('data', (chunk: Buffer) => (text += chunk.toString()));
            response.on('end', () => resolve({ status: response.statusCode!, text }));
          },
        );
        request.on('error', reject);
        request.once('continue', () => {
          request.write(body.slice(0, 10));
          first.child.kill('SIGTERM');
          // The rest of the body comes once the service has stopped accepting connections: it is shutting down.
          waitFor(() => refusesConnections(first.url), {
            timeoutMs: 10_000,
            what: 'the service to refuse new connections after SIGTERM',
          }).then(() => request.end(body.slice(10)), reject);
        });
        request.flushHeaders();
      });
      const finished = await inFlight;
      expect(finished.status).toBe(200);
      expect(JSON.parse(finished.text).message).toBe('Login successful');
      expect(await first.exited).toBe(0);
      expect(isAlive(postgresPid)).toBe(false);
      await expect(fetch(`${first.url}/api/health`)).rejects.toThrow();

      // Nothing secret reached the log: no password, no token, no Authorization header.
      const log = first.output();
      expect(log).toContain('"reqId":"trace-me-123"');
      expect(log).not.toContain(ADMIN_PASSWORD);
      expect(log).not.toContain(token);
      expect(log.toLowerCase()).not.toContain('authorization');
    } finally {
      first.child.kill('SIGKILL');
    }

    const second = await start(dataDir);
    try {
      // Same admin (not bootstrapped twice), same JWT secret: the earlier token still works.
      expect((await client(second.url).get('/api/auth/me', { token })).status).toBe(200);
      expect((await login(second.url)).status).toBe(200);
      expect(second.output()).not.toContain('Created the first administrator');
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      second.child.kill('SIGKILL');
    }
  });

  it('takes over after a crash: a cluster left by a killed instance is stopped, a live one is left alone', async () => {
    const crashed = await start(dataDir);
    const postgresPid = Number(
      (await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0],
    );
    crashed.child.kill('SIGKILL');
    await crashed.exited;
    expect(isAlive(postgresPid)).toBe(true); // orphaned

    const restarted = await start(dataDir);
    try {
      expect(isAlive(postgresPid)).toBe(false);
      expect((await login(restarted.url)).status).toBe(200);

      // A second instance on the same DATA_DIR while the first is alive refuses to start.
      const intruder = await runServiceUntilExit(env(dataDir));
      expect(intruder.code).toBe(1);
      expect(intruder.stderr).toContain('is in use by another running instance');
      expect((await client(restarted.url).get('/api/health/ready')).status).toBe(200);
    } finally {
      restarted.child.kill('SIGTERM');
      await restarted.exited;
    }
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ JWT_SECRET: 'too-short' }, 'JWT_SECRET'],
    [{ NODE_ENV: 'production' }, 'JWT_SECRET'],
    [{ DATABASE_URL: 'mysql://localhost/db' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ MODULE_CODE_PATTERN: '([' }, 'MODULE_CODE_PATTERN'],
    [{ SWAGGER_ENABLED: 'maybe' }, 'SWAGGER_ENABLED'],
  ])('refuses to start with %j and names %s', async (extra, variable) => {
    const { code, stderr } = await runServiceUntilExit(env(dataDir, extra));
    expect(code).toBe(78);
    expect(stderr).toContain(`Invalid configuration: ${variable}`);
  });

  it.each([
    ['empty', ''],
    ['cut short', 'x'.repeat(20) + '\n'],
  ])(
    'refuses to start with a stored JWT secret that is %s, before anything else starts',
    async (_kind, content) => {
      const secretDir = await mkdtemp(path.join(tmpdir(), 'mas-secret-'));
      try {
        await writeFile(path.join(secretDir, 'jwt-secret'), content);
        const { code, stderr } = await runServiceUntilExit(env(secretDir));
        expect(code).toBe(78);
        expect(stderr).toContain(`jwt-secret holds a secret of ${content.trim().length} characters`);
        expect(stderr).toContain('Set JWT_SECRET');
        // Stopped before the embedded database was made, and the file was left as it was.
        expect(await readdir(secretDir)).toEqual(['jwt-secret']);
        expect(await readFile(path.join(secretDir, 'jwt-secret'), 'utf8')).toBe(content);
      } finally {
        await rm(secretDir, { recursive: true, force: true });
      }
    },
  );

  it('migrates from the command line (npm run migration:run)', async () => {
    const freshDir = await mkdtemp(path.join(tmpdir(), 'mas-migrate-'));
    const run = () =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [path.resolve('dist/src/database/migrate.js')], {
          env: env(freshDir),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.once('exit', (code) => resolve({ code, out }));
      });
    try {
      const first = await run();
      expect(first.code).toBe(0);
      expect(first.out).toMatch(/^Applied: InitialSchema\d+/);
      expect(await run()).toEqual({ code: 0, out: 'No pending migrations\n' });
    } finally {
      await rm(freshDir, { recursive: true, force: true });
    }
  });

  it('creates users from the command line', async () => {
    const run = (args: string[], extra: Record<string, string> = {}) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [path.resolve('dist/src/cli.js'), ...args], {
          env: env(dataDir, extra),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.once('exit', (code) => resolve({ code, out }));
      });
    const named = ['--username', 'cli.user', '--email', 'CLI@Example.edu'];
    const created = await run(['user:create', ...named, '--password', 'cli-password-1']);
    expect(created).toEqual({ code: 0, out: expect.stringContaining('Created user "cli.user"') });
    const again = await run(['user:create', '--username', 'CLI.USER', '--email', 'other@example.edu']);
    expect(again.code).toBe(64);
    expect(again.out).toContain('already exists');
    const invalid = await run(['user:create', '--username', 'x', '--email', 'nope', '--password', 'short']);
    expect(invalid.code).toBe(64);
    expect(invalid.out).toContain(
      "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'",
    );
    expect(invalid.out).toContain('Email must be a valid email address');
    expect(invalid.out).toContain('Password must be 8-128 characters');

    const service = await start(dataDir);
    try {
      const session = await client(service.url).post('/api/auth/login', {
        body: { username: 'cli.user', password: 'cli-password-1' },
      });
      expect(session.status).toBe(200);
      expect(session.body.data.user).toMatchObject({
        username: 'cli.user',
        email: 'cli@example.edu',
        admin: false,
      });
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  });
});
