import { spawn } from 'node:child_process';
import path from 'node:path';
import { testDatabaseUrl, useTestApp } from './support/app.js';
import { freshAdmin } from './support/fresh-admin.js';

/** The built command line (`npm run test:slow` builds first), run as a process against the test database. */
const CLI = path.resolve('dist/src/cli.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): Promise<Run> {
  const { NODE_OPTIONS: _jest, ...rest } = process.env;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...rest, DATABASE_URL: testDatabaseUrl() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run cli -- user:create (through the users service)', () => {
  const { app, api } = useTestApp();
  let token: string;

  beforeEach(async () => {
    ({ token } = await freshAdmin(app, { username: 'root', email: 'root@example.edu' }));
  });

  it('creates the user as POST /api/users does, with its audit event and change event', async () => {
    const after = (await api.get('/api/events', { token })).body.data.next as string;
    const run = await cli([
      'user:create',
      '--username',
      'cli.user',
      '--email',
      'CLI@Example.edu',
      '--password',
      'cli-password-1',
      '--admin',
    ]);
    expect(run).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^Created administrator "cli\.user" with id \d+\n$/),
      stderr: '',
    });
    const id = Number(/with id (\d+)/.exec(run.stdout)![1]);

    const session = await api.post('/api/auth/login', {
      body: { username: 'cli.user', password: 'cli-password-1' },
    });
    expect(session.status).toBe(200);
    expect(session.body.data.user).toMatchObject({ id, email: 'cli@example.edu', admin: true });

    // The command line is nobody signed in, from no address, with a request id of its own per run.
    const audit = await api.get('/api/audit?action=user.create', { token });
    expect(audit.body.data.events).toEqual([
      expect.objectContaining({
        actor_id: null,
        action: 'user.create',
        target_type: 'user',
        target_ids: [id],
        summary: { username: 'cli.user', admin: true },
        request_id: expect.stringMatching(/^cli:[0-9a-f-]{36}$/),
        client_ip: null,
      }),
    ]);

    const feed = await api.get(`/api/events?after=${after}`, { token });
    expect(feed.body.data.events).toEqual([
      expect.objectContaining({
        type: 'user.created',
        data: expect.objectContaining({ id, username: 'cli.user', email: 'cli@example.edu', admin: true }),
      }),
    ]);
  });

  it('prints a generated password once, which signs in', async () => {
    const run = await cli(['user:create', '--username', 'generated', '--email', 'generated@example.edu']);
    expect(run.code).toBe(0);
    const [, password] = /^Created user "generated" with id \d+ and password (\S+)\n$/.exec(run.stdout)!;
    const session = await api.post('/api/auth/login', { body: { username: 'generated', password } });
    expect(session.status).toBe(200);
  });

  it('refuses what POST /api/users refuses, with the same messages, and exits 64', async () => {
    const body = { username: 'x', email: 'nope', password: 'short' };
    const http = await api.post('/api/users', { token, body });
    expect(http.status).toBe(400);
    const run = await cli(['user:create', '--username', 'x', '--email', 'nope', '--password', 'short']);
    expect(run.code).toBe(64);
    expect(run.stderr.trim().split('\n')).toEqual(http.body.message.split('; '));

    const taken = await api.post('/api/users', {
      token,
      body: { username: 'ROOT', email: 'other@example.edu', password: 'long-enough-1' },
    });
    expect(taken.status).toBe(409);
    const again = await cli(['user:create', '--username', 'ROOT', '--email', 'other@example.edu']);
    expect(again).toEqual({ code: 64, stdout: '', stderr: `${taken.body.message}\n` });
    const takenEmail = await cli(['user:create', '--username', 'other', '--email', 'Root@example.edu']);
    expect(takenEmail).toMatchObject({ code: 64, stderr: 'A user with this email already exists\n' });

    // Nothing was written: no user, no audit event, no change event.
    expect((await app.dataSource.query(`SELECT count(*)::int AS n FROM users`))[0].n).toBe(1);
    expect((await app.dataSource.query(`SELECT count(*)::int AS n FROM audit_events`))[0].n).toBe(0);
    expect((await app.dataSource.query(`SELECT count(*)::int AS n FROM change_events`))[0].n).toBe(0);
  });

  it('exits 64 for an unknown option or command, and 0 for --help', async () => {
    expect(await cli(['user:create', '--username', 'abc', '--bogus'])).toMatchObject({
      code: 64,
      stderr: expect.stringContaining("Unknown option '--bogus'"),
    });
    expect(await cli(['user:nothing'])).toMatchObject({
      code: 64,
      stdout: expect.stringContaining('Usage:'),
    });
    expect(await cli(['--help'])).toMatchObject({ code: 0, stdout: expect.stringContaining('user:create') });
  });
});
