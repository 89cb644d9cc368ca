import { type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isAlive, serviceEnv, startServiceProcess } from './support/processes.js';
import { refusesConnections } from './support/sockets.js';
import { waitFor } from './support/wait-for.js';

/**
 * SIGTERM while a burst of requests is in flight, on the embedded database: every request already sent gets
 * its normal answer, the process exits 0 within the 10 s grace period, and the database stops after them.
 */
const ADMIN_PASSWORD = 'shutdown-load-admin-password';
const IN_FLIGHT = 24;

interface Answer {
  status?: number;
  body?: any;
  error?: string;
  at: number;
}

/**
 * A request over its own connection, sent with `Expect: 100-continue`: `accepted` resolves when the server has
 * read its head (its 100 Continue), and `answer` with the status and body, or the socket error's code. With
 * `holdBack`, the last bytes of the body are sent only once it resolves: the request is then still in flight.
 */
function send(
  url: string,
  method: string,
  route: string,
  body?: unknown,
  token?: string,
  holdBack?: Promise<unknown>,
): { answer: Promise<Answer>; accepted: Promise<void> } {
  const { hostname, port } = new URL(url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  let accept!: () => void;
  const accepted = new Promise<void>((resolve) => (accept = resolve));
  const answer = new Promise<Answer>((resolve) => {
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
          expect: '100-continue',
        },
      },
      (response) => {
        accept();
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () =>
          resolve({ status: response.statusCode, body: JSON.parse(text), at: Date.now() }),
        );
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      accept();
      resolve({ error: error.code ?? error.message, at: Date.now() });
    });
    request.once('continue', () => {
      accept();
      if (holdBack && payload) {
        request.write(payload.slice(0, -2));
        void holdBack.then(
          () => request.end(payload.slice(-2)),
          (error: Error) => request.destroy(error),
        );
      } else request.end(payload);
    });
    request.flushHeaders();
  });
  return { answer, accepted };
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
    const service = await startServiceProcess(serviceEnv({ DATA_DIR: dataDir, ADMIN_PASSWORD }));
    ({ child } = service);
    const { url, output, exited } = service;
    const postgresPid = Number(
      (await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0],
    );
    const login = await send(url, 'POST', '/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD })
      .answer;
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
    // However fast the machine, one request is certainly still in flight at SIGTERM: its body is not complete
    // until the service has stopped accepting connections.
    let signalled!: () => void;
    const afterSignal = new Promise<void>((resolve) => (signalled = resolve));
    const slow = send(
      url,
      'POST',
      '/api/modules',
      { code: 'SLW999', year: 2026, credits: 15 },
      token,
      afterSignal.then(() =>
        waitFor(() => refusesConnections(url), {
          timeoutMs: 10_000,
          what: 'the service to refuse new connections after SIGTERM',
        }),
      ),
    );
    // The service has accepted every connection and read each request's head (the logins, argon2 at 19 MiB
    // each, are still to run), then is asked to stop. A connection still in the kernel's queue at SIGTERM is not
    // accepted: it is reset when the listening socket closes, which is what a client retries on.
    await Promise.all([...burst, slow].map((request) => request.accepted));
    const termAt = Date.now();
    child.kill('SIGTERM');
    signalled();
    const answers = await Promise.all([...burst, slow].map((request) => request.answer));
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
    expect(output()).not.toMatch(/"level":50/);
  });
});
