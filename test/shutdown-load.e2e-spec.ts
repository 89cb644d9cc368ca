import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isAlive } from './support/processes.js';

/**
 * SIGTERM while a burst of requests is in flight, on the embedded database: every request already sent gets
 * its normal answer, the process exits 0 within the 10 s grace period, and the database stops after them.
 */
const MAIN = path.resolve('dist/src/main.js');
const ADMIN_PASSWORD = 'shutdown-load-admin-password';
const IN_FLIGHT = 24;

/**
 * A request over its own connection; resolves with the status and body, or the socket error's code. With
 * `holdBack`, the last bytes of the body are sent only once it resolves: the request is then still in flight.
 */
function send(
  url: string,
  method: string,
  route: string,
  body?: unknown,
  token?: string,
  holdBack?: Promise<unknown>,
) {
  const { hostname, port } = new URL(url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<{ status?: number; body?: any; error?: string; at: number }>((resolve) => {
    const request = http.request(
      {
        host: hostname,
        port,
        method,
        path: route,
        agent: false,
        headers: {
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {}),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () =>
          resolve({ status: response.statusCode, body: JSON.parse(text), at: Date.now() }),
        );
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ error: error.code ?? error.message, at: Date.now() }),
    );
    if (holdBack && payload) {
      request.write(payload.slice(0, -2));
      void holdBack.then(() => request.end(payload.slice(-2)));
    } else request.end(payload);
  });
}

describe('graceful shutdown under load', () => {
  let dataDir: string;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-shutdown-'));
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('finishes every request in flight at SIGTERM, exits 0 in the grace period, stops the database last', async () => {
    const { DATABASE_URL: _url, JWT_SECRET: _secret, ...rest } = process.env;
    child = spawn(process.execPath, [MAIN], {
      env: { ...rest, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ADMIN_PASSWORD, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 60_000;
    while (!/listening on (http:\/\/[^/"\s]+)\/api/.test(output)) {
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`service did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const url = /listening on (http:\/\/[^/"\s]+)\/api/.exec(output)![1];
    const postgresPid = Number(
      (await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0],
    );
    const login = await send(url, 'POST', '/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD });
    expect(login.status).toBe(200);
    const token: string = login.body.data.token;

    // A mixed burst: logins (argon2, slow), module creations (writes) and reads.
    const burst = Array.from({ length: IN_FLIGHT }, (_, i) => {
      if (i % 3 === 0)
        return send(url, 'POST', '/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD });
      if (i % 3 === 1) {
        return send(
          url,
          'POST',
          '/api/modules',
          { code: `SHD${String(i).padStart(3, '0')}`, year: 2026, credits: 15 },
          token,
        );
      }
      return send(url, 'GET', '/api/modules', undefined, token);
    });
    // However fast the machine, one request is certainly still in flight at SIGTERM: its body is not complete.
    let signalled!: () => void;
    const afterSignal = new Promise<void>((resolve) => (signalled = resolve));
    const slow = send(
      url,
      'POST',
      '/api/modules',
      { code: 'SLW999', year: 2026, credits: 15 },
      token,
      afterSignal.then(() => new Promise((resolve) => setTimeout(resolve, 300))),
    );
    // Let the service accept every connection and start on each request (the logins, argon2 at 19 MiB each,
    // are still running), then ask it to stop. A connection still in the kernel's queue at SIGTERM is not
    // accepted: it is reset when the listening socket closes, which is what a client retries on.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const termAt = Date.now();
    child.kill('SIGTERM');
    signalled();
    const answers = await Promise.all([...burst, slow]);
    const code = await exited;
    const tookMs = Date.now() - termAt;

    const statuses = answers.map((answer) => answer.status ?? answer.error);
    const expected = [...Array.from({ length: IN_FLIGHT }, (_, i) => (i % 3 === 1 ? 201 : 200)), 201];
    expect(statuses).toEqual(expected);
    // The test proves something only if requests were still running when the signal came.
    expect(answers.filter((answer) => answer.at > termAt).length).toBeGreaterThan(0);
    expect(code).toBe(0);
    expect(tookMs).toBeLessThan(10_000 + 3_000);
    expect(isAlive(postgresPid)).toBe(false);
    // Nothing failed on the way down: no error line in the log.
    expect(output).not.toMatch(/"level":50/);
  });
});
