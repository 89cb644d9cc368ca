// The HTTP layer: its conventions (docs/api.md §1), mass assignment and bounds, answers given before the body is read, request timeouts, proxies and the connection pool.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import { spawn } from 'node:child_process';
import net from 'node:net';
import pg from 'pg';
import { startTestApp, testDatabaseUrl, useTestApp } from './support/app.js';
import { DEFAULT_PASSWORD, makeUser, tokenFor, type UserRow } from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';
import { client } from './support/http.js';
import { poolOf } from './support/pool.js';
import { ROUTE_ACCESS } from './support/route-access.js';
import { waitFor } from './support/wait-for.js';

/**
 * An answer given before the request body is read (unknown user, no token, not an admin, a body too large or of
 * the wrong type) must reach a client that is still sending that body: intact status, headers and envelope, no
 * connection reset. Real clients only: Node's fetch (undici) and a raw socket that keeps writing.
 */

const TWO_MIB = 2 * 1024 * 1024;
const MISSING_USER = 987_654_321;
/** A failure here is a race between the answer and the close: each request is sent a few times. */
const ROUNDS = 3;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** How many body bytes the client had written when the answer was complete. */
  written: number;
  /** With `keepWriting`: body bytes written when the server closed, and how long after the answer. */
  writtenAtClose?: number;
  closedAfterMs?: number;
}

/**
 * Sends a request head announcing `declared` body bytes, then writes the body in 64 KiB chunks as fast as the
 * socket takes them until the whole answer has been read or the socket fails. Fails on a reset or a
 * connection closed before a complete answer.
 */
function rawRequest(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  declared: number,
  keepWriting = false,
): Promise<RawAnswer> {
  const chunk = Buffer.alloc(65_536, 0x61);
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    let written = 0;
    let settled = false;
    let answered: { answer: RawAnswer; at: number } | undefined;
    const finish = (error?: Error, answer?: RawAnswer) => {
      if (settled) return;
      if (answered && error) {
        // Keeping on writing after the answer: the server's close is the expected end.
        error = undefined;
        answer = {
          ...answered.answer,
          writtenAtClose: written,
          closedAfterMs: Date.now() - answered.at,
        };
      }
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(answer!);
    };
    const timer = setTimeout(
      () => finish(new Error(answered ? 'the server never closed' : 'no complete answer within 15 s')),
      15_000,
    );
    const tryParse = () => {
      if (answered) return;
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const parsedHeaders: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        parsedHeaders[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(parsedHeaders['content-length']);
      if (!Number.isInteger(length)) return finish(new Error(`answer without Content-Length: ${statusLine}`));
      const body = received.subarray(end + 4);
      if (body.length < length) return;
      const answer = {
        status: Number(statusLine.split(' ')[1]),
        headers: parsedHeaders,
        body: JSON.parse(body.subarray(0, length).toString('utf8')),
        written,
      };
      if (keepWriting) answered = { answer, at: Date.now() };
      else finish(undefined, answer);
    };
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      tryParse();
    });
    socket.on('error', (error) =>
      finish(new Error(`socket failed after ${received.length} bytes of answer: ${error.message}`)),
    );
    socket.on('close', () => finish(new Error(`connection closed after ${received.length} bytes of answer`)));
    socket.on('end', () => finish(new Error(`connection ended after ${received.length} bytes of answer`)));
    const head =
      `${method} ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Length: ${declared}\r\n` +
      Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      '\r\n';
    socket.write(head);
    const pump = () => {
      while (!settled && written < declared) {
        const piece = chunk.subarray(0, Math.min(chunk.length, declared - written));
        written += piece.length;
        if (!socket.write(piece)) return void socket.once('drain', pump);
      }
    };
    pump();
  });
}

interface ParsedAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/**
 * One keep-alive connection spoken by hand: requests are written in order and their answers read in order, so a
 * test can put several requests on the same socket, as a pooling client does.
 */
class RawConnection {
  private received = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  /** Set once the server ended or reset the connection. */
  ended = false;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (data: Buffer) => {
      this.received = Buffer.concat([this.received, data]);
      this.wake?.();
    });
    const end = () => {
      this.ended = true;
      this.wake?.();
    };
    socket.on('end', end);
    socket.on('close', end);
    // A write after the server's close fails; `ended` says so.
    socket.on('error', end);
  }

  static async open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    const socket = net.connect(Number(port), hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    return new RawConnection(socket);
  }

  /** Writes, waiting for the socket to take the data; resolves early once the connection has ended. */
  async write(data: string | Buffer): Promise<void> {
    if (this.ended || this.socket.write(data)) return;
    await new Promise<void>((resolve) => {
      this.socket.once('drain', resolve);
      this.socket.once('close', resolve);
    });
  }

  /** Writes `size` bytes in 64 KiB pieces, each framed as a chunk when `chunked`. */
  async writeBody(size: number, chunked = false): Promise<void> {
    const piece = Buffer.alloc(65_536, 0x61);
    for (let written = 0; written < size && !this.ended; written += piece.length) {
      const data = piece.subarray(0, Math.min(piece.length, size - written));
      if (chunked) await this.write(`${data.length.toString(16)}\r\n`);
      await this.write(data);
      if (chunked) await this.write('\r\n');
    }
    if (chunked) await this.write('0\r\n\r\n');
  }

  /** The next complete answer on the connection; fails if the connection ends first or after 10 s. */
  async answer(): Promise<ParsedAnswer> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const parsed = this.parse();
      if (parsed) return parsed;
      if (this.ended) throw new Error(`connection ended with ${this.received.length} bytes of an answer`);
      if (Date.now() > deadline) throw new Error('no complete answer within 10 s');
      await this.nextEvent(deadline);
    }
  }

  /** Resolves when the server has ended the connection; fails after 10 s. */
  async serverEnd(): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error('the server kept the connection for 10 s');
      await this.nextEvent(deadline);
    }
  }

  /** Resolves at the connection's next data or end, or at `deadline` if nothing comes before. */
  private nextEvent(deadline: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()) + 1);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }

  destroy(): void {
    this.socket.destroy();
  }

  private parse(): ParsedAnswer | undefined {
    const end = this.received.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = this.received.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length']);
    if (this.received.length < end + 4 + length) return undefined;
    const body = this.received.subarray(end + 4, end + 4 + length).toString('utf8');
    this.received = this.received.subarray(end + 4 + length);
    return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
  }
}

/** A part of `size` bytes: a PNG signature then filler when `png`, otherwise text. */
interface RemotePart {
  name: string;
  filename: string;
  type?: string;
  size: number;
  png?: boolean;
}

interface RemoteRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** Multipart parts sent as FormData, or a raw body of `size` spaces. */
  parts?: RemotePart[];
  size?: number;
}

interface RemoteAnswer {
  status?: number;
  body?: any;
  error?: string;
}

const TOO_LARGE = 'Request body too large';
const UNSUPPORTED = 'Unsupported content type';

/**
 * Node's fetch in a process of its own, as a real client is: in the test's own process the client and the
 * service share one event loop, which hides the race between the answer and the close.
 */
const REMOTE_FETCH = `
let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const r of JSON.parse(input)) {
  let body;
  if (r.parts) {
    body = new FormData();
    for (const p of r.parts) {
      const data = Buffer.alloc(p.size, p.png ? 0x5a : 0x74);
      if (p.png) Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(data);
      body.append(p.name, new Blob([data], { type: p.type ?? 'image/png' }), p.filename);
    }
  } else if (r.size) body = Buffer.alloc(r.size, 0x20);
  try {
    const res = await fetch(r.url, { method: r.method, headers: r.headers, body });
    const text = await res.text();
    results.push({ status: res.status, body: JSON.parse(text) });
  } catch (error) {
    results.push({ error: String(error.cause?.code ?? error.message) });
  }
}
process.stdout.write(JSON.stringify(results));
`;

async function remoteFetch(
  requests: RemoteRequest[],
): Promise<{ status?: number; body?: any; error?: string }[]> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', REMOTE_FETCH], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  child.stdin.end(JSON.stringify(requests));
  await new Promise((resolve) => child.once('close', resolve));
  return JSON.parse(output);
}

function expectEnvelope(body: any, message: string) {
  expect(body).toEqual({ success: false, data: null, message });
}

describe('Answers given before the request body is read reach the client', () => {
  const { app } = useTestApp();
  let admin: UserRow;
  let user: UserRow;
  let adminToken: string;
  let userToken: string;

  beforeAll(async () => {
    await app.reset();
    admin = await makeUser(app.dataSource, { admin: true });
    user = await makeUser(app.dataSource);
    adminToken = tokenFor(admin);
    userToken = tokenFor(user);
  });

  describe('Node fetch in another process, each request sent a few times', () => {
    const png = (size: number) => ({ size, png: true });
    const bodies: [string, RemotePart[]][] = [
      ['a PNG under another field name', [{ name: 'picture', filename: 'a.png', ...png(4096) }]],
      [
        'two files',
        [
          { name: 'file', filename: 'a.png', ...png(4096) },
          { name: 'file', filename: 'b.png', ...png(4096) },
        ],
      ],
      ['a text file', [{ name: 'file', filename: 'a.txt', type: 'text/plain', size: 120_000 }]],
      ['2 MiB + 1 byte', [{ name: 'file', filename: 'big.png', ...png(TWO_MIB + 1) }]],
      ['exactly 2 MiB', [{ name: 'file', filename: 'big.png', ...png(TWO_MIB) }]],
      ['a small PNG', [{ name: 'file', filename: 'a.png', ...png(4096) }]],
      ['a 6 MiB file', [{ name: 'file', filename: 'huge.png', ...png(3 * TWO_MIB) }]],
    ];
    const avatar =
      (userId: () => number, token: () => string | undefined) =>
      (parts: RemotePart[]) =>
      (): RemoteRequest => ({
        url: `${app.url}/api/users/${userId()}/avatar`,
        method: 'PUT',
        headers: token() ? { authorization: `Bearer ${token()}` } : {},
        parts,
      });
    const json = (method: string, path: string, type: string) => () => ({
      url: app.url + path,
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': type },
      size: 3 * TWO_MIB,
    });
    const cases: [string, () => RemoteRequest, number, string][] = [
      ...bodies.map(([name, parts]): [string, () => RemoteRequest, number, string] => [
        `PUT avatar of an unknown user with ${name}`,
        avatar(
          () => MISSING_USER,
          () => adminToken,
        )(parts),
        404,
        'User not found',
      ]),
      ...bodies.map(([name, parts]): [string, () => RemoteRequest, number, string] => [
        `PUT avatar without a token with ${name}`,
        avatar(
          () => user.id,
          () => undefined,
        )(parts),
        401,
        'Authentication required',
      ]),
      ...bodies.map(([name, parts]): [string, () => RemoteRequest, number, string] => [
        `PUT avatar by a non-admin with ${name}`,
        avatar(
          () => user.id,
          () => userToken,
        )(parts),
        403,
        'You do not have permission to perform this action',
      ]),
      [
        'PUT avatar with 6 MiB of octet-stream',
        json('PUT', '/api/users/1/avatar', 'application/octet-stream'),
        415,
        'Unsupported content type',
      ],
      [
        'POST /api/modules with 6 MiB of JSON',
        json('POST', '/api/modules', 'application/json'),
        413,
        TOO_LARGE,
      ],
      [
        'PUT /api/modules/1 with 6 MiB of JSON',
        json('PUT', '/api/modules/1', 'application/json'),
        413,
        TOO_LARGE,
      ],
      [
        'POST /api/users/bulk with 6 MiB of JSON',
        json('POST', '/api/users/bulk', 'application/json'),
        413,
        TOO_LARGE,
      ],
      [
        'POST /api/auth/login with 6 MiB of JSON',
        json('POST', '/api/auth/login', 'application/json'),
        413,
        TOO_LARGE,
      ],
      ['POST /api/modules with 6 MiB of text', json('POST', '/api/modules', 'text/plain'), 415, UNSUPPORTED],
      [
        'POST /api/modules/1/students with 6 MiB of a form',
        json('POST', '/api/modules/1/students', 'application/x-www-form-urlencoded'),
        415,
        UNSUPPORTED,
      ],
    ];
    let answers: RemoteAnswer[][] = [];

    beforeAll(async () => {
      // One client process for every request: starting Node is the slow part on a busy machine.
      const flat = await remoteFetch(cases.flatMap(([, build]) => Array.from({ length: ROUNDS }, build)));
      answers = cases.map((_, index) => flat.slice(index * ROUNDS, (index + 1) * ROUNDS));
    });

    it.each(cases.map(([name, , status, message], index) => [name, status, message, index] as const))(
      '%s answers %i',
      (_name, status, message, index) => {
        expect(answers[index]).toHaveLength(ROUNDS);
        for (const res of answers[index]) {
          expect(res.error).toBeUndefined();
          expect(res.status).toBe(status);
          expectEnvelope(res.body, message);
        }
      },
    );
  });

  describe('a raw socket that keeps writing a large body', () => {
    const multipart = { 'content-type': 'multipart/form-data; boundary=xyz' };
    const json = { 'content-type': 'application/json' };
    const cases: [string, string, string, () => Record<string, string>, number, string][] = [
      [
        'avatar of an unknown user',
        'PUT',
        `/api/users/${MISSING_USER}/avatar`,
        () => ({ ...multipart, authorization: `Bearer ${adminToken}` }),
        404,
        'User not found',
      ],
      [
        'avatar without a token',
        'PUT',
        '/api/users/1/avatar',
        () => multipart,
        401,
        'Authentication required',
      ],
      [
        'avatar by a non-admin',
        'PUT',
        '/api/users/1/avatar',
        () => ({ ...multipart, authorization: `Bearer ${userToken}` }),
        403,
        'You do not have permission to perform this action',
      ],
      [
        'avatar as text',
        'PUT',
        '/api/users/1/avatar',
        () => ({ 'content-type': 'text/plain', authorization: `Bearer ${adminToken}` }),
        415,
        'Unsupported content type',
      ],
      [
        'JSON over 1 MiB to POST /api/modules',
        'POST',
        '/api/modules',
        () => ({ ...json, authorization: `Bearer ${adminToken}` }),
        413,
        'Request body too large',
      ],
      ['JSON over 1 MiB without a token', 'POST', '/api/users', () => json, 413, 'Request body too large'],
      [
        'text to PUT /api/auth/password',
        'PUT',
        '/api/auth/password',
        () => ({ 'content-type': 'text/plain', authorization: `Bearer ${userToken}` }),
        415,
        'Unsupported content type',
      ],
      // The body is framed before routing: an oversized one is refused before the route is looked up.
      [
        'JSON over 1 MiB to an unknown route',
        'POST',
        '/api/nothing-here',
        () => json,
        413,
        'Request body too large',
      ],
    ];

    it.each(cases)('%s: %s %s', async (_name, method, path, headers, status, message) => {
      const answer = await rawRequest(app.url, method, path, headers(), 16 * 1024 * 1024);
      expect(answer.status).toBe(status);
      expect(answer.body.success).toBe(false);
      expect(answer.body.message).toBe(message);
      expect(answer.headers['x-request-id']).toBeTruthy();
      // The service did not wait for the 16 MiB it was promised.
      expect(answer.written).toBeLessThan(16 * 1024 * 1024);
    });
  });

  it('a client that keeps writing after the answer is cut off after a bounded amount, with a close it can read', async () => {
    const declared = 64 * 1024 * 1024;
    const answer = await rawRequest(
      app.url,
      'PUT',
      `/api/users/${MISSING_USER}/avatar`,
      { 'content-type': 'multipart/form-data; boundary=xyz', authorization: `Bearer ${adminToken}` },
      declared,
      true,
    );
    expect(answer.status).toBe(404);
    expect(answer.body.message).toBe('User not found');
    // 4 MiB are drained, plus what the socket buffers hold on both sides.
    expect(answer.writtenAtClose).toBeLessThan(16 * 1024 * 1024);
    expect(answer.closedAfterMs).toBeLessThan(8_000);
  });

  it('a body drained in full leaves the connection open for the next request', async () => {
    const { hostname, port } = new URL(app.url);
    const socket = net.connect(Number(port), hostname);
    const body = Buffer.alloc(512 * 1024, 0x61);
    const texts: string[] = [];
    socket.on('data', (data: Buffer) => texts.push(data.toString('latin1')));
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `PUT /api/users/${MISSING_USER}/avatar HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${adminToken}\r\n` +
        `Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body);
    socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
    try {
      await waitFor(() => /HTTP\/1\.1 200[^]*"success":true/.test(texts.join('')), {
        timeoutMs: 5000,
        what: 'the answer to the request after the drained body',
        seen: () => texts.join(''),
      });
    } finally {
      socket.destroy();
    }
    const all = texts.join('');
    expect(all).toMatch(/^HTTP\/1\.1 404 /);
    expect(all).toMatch(/HTTP\/1\.1 200 OK/);
  });

  describe('a connection that carried earlier requests', () => {
    const MIB = 1_048_576;
    const avatarHead = (headers: string) =>
      `PUT /api/users/${MISSING_USER}/avatar HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${adminToken}\r\n` +
      `Content-Type: multipart/form-data; boundary=xyz\r\n${headers}\r\n`;

    /** Sends an avatar upload the service answers 404 before reading the body, and returns that answer. */
    async function earlyAnswer(connection: RawConnection, size: number, chunked = false) {
      await connection.write(
        avatarHead(chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${size}\r\n`),
      );
      const answer = connection.answer();
      // Written alongside: the answer comes before the body is read.
      const writing = connection.writeBody(size, chunked);
      const result = await answer;
      expect(result.status).toBe(404);
      expect(result.body.message).toBe('User not found');
      return { answer: result, writing };
    }

    it('a body too large to drain is announced with Connection: close, whatever the connection read before', async () => {
      const connection = await RawConnection.open(app.url);
      try {
        // Two bodies small enough to drain: both answers keep the connection, which has now read over 6 MiB.
        for (let round = 0; round < 2; round++) {
          const { answer, writing } = await earlyAnswer(connection, 3 * MIB);
          expect(answer.headers.connection).toBe('keep-alive');
          await writing;
        }
        // 8 MiB cannot be drained: the answer must say the connection ends, or a client reuses it as it closes.
        const { answer } = await earlyAnswer(connection, 8 * MIB);
        expect(answer.headers.connection).toBe('close');
        await connection.serverEnd();
      } finally {
        connection.destroy();
      }
    });

    it('a drainable body after earlier requests is drained and the connection serves the next request', async () => {
      const connection = await RawConnection.open(app.url);
      try {
        for (let round = 0; round < 3; round++) {
          const { answer, writing } = await earlyAnswer(connection, 3 * MIB);
          expect(answer.headers.connection).toBe('keep-alive');
          await writing;
        }
        await connection.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
        expect((await connection.answer()).status).toBe(200);
      } finally {
        connection.destroy();
      }
    });

    it('a body without a declared length (chunked) is not waited for: the answer says Connection: close', async () => {
      const connection = await RawConnection.open(app.url);
      try {
        const { answer } = await earlyAnswer(connection, 8 * MIB, true);
        expect(answer.headers.connection).toBe('close');
        await connection.serverEnd();
      } finally {
        connection.destroy();
      }
    });
  });

  it('the service keeps serving after many early answers', async () => {
    const res = await fetch(`${app.url}/api/health`);
    expect(res.status).toBe(200);
  });
});

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * For every path of the route-access table, the methods it does not serve that no other route matches either
 * (`GET /api/modules/bulk` is `GET /api/modules/{module_id}`), with the path's ids filled in.
 */
function unservedMethods(): { method: string; path: string }[] {
  const routes = Object.keys(ROUTE_ACCESS).map((key) => {
    const [method, template] = key.split(' ');
    return { method, template, pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`) };
  });
  const paths = [...new Set(routes.map((r) => r.template.replace(/\{[^}]+\}/g, '1')))];
  return paths.flatMap((path) =>
    METHODS.filter((method) => !routes.some((r) => r.method === method && r.pattern.test(path))).map(
      (method) => ({ method, path }),
    ),
  );
}

/** docs/api.md §1: the envelope on every framework error, body framing, path ids. */
describe('conventions (docs/api.md §1)', () => {
  const { app, api } = useTestApp();
  let token: string;
  beforeEach(async () => {
    ({ token } = await freshAdmin(app));
  });

  const error = (message: string) => ({ success: false, data: null, message });

  it('answers an unknown route with 404 Route not found, with or without a token', async () => {
    for (const res of [
      await api.get('/api/nope'),
      await api.get('/api/nope', { token }),
      await api.get('/elsewhere'),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual(error('Route not found'));
    }
  });

  it('answers 404 Route not found to a method a route does not serve, before access is checked', async () => {
    const member = tokenFor(await makeUser(app.dataSource));
    const wrong: string[] = [];
    let sent = 0;
    for (const { method, path } of unservedMethods()) {
      for (const caller of [member, undefined]) {
        const res = await api.request(method, path, {
          token: caller,
          body: method === 'GET' ? undefined : {},
        });
        sent++;
        if (res.status !== 404 || JSON.stringify(res.body) !== JSON.stringify(error('Route not found'))) {
          wrong.push(`${method} ${path} ${caller ? 'with' : 'without'} a token → ${res.status}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(sent).toBeGreaterThan(Object.keys(ROUTE_ACCESS).length);
  });

  it('answers malformed and empty JSON with 400 Malformed JSON body before authentication', async () => {
    for (const body of ['{"password": ', '{bad json}', '']) {
      const res = await api.put('/api/auth/password', {
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('Malformed JSON body'));
    }
  });

  it('answers a content type the route does not accept with 415 before authentication', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await api.put('/api/auth/password', {
        body: 'a=b',
        headers: { 'content-type': contentType },
      });
      expect(res.status).toBe(415);
      expect(res.body).toEqual(error('Unsupported content type'));
    }
  });

  it('answers a JSON body over 1 MiB with 413 before authentication', async () => {
    const body = JSON.stringify({ username: 'x'.repeat(1_048_576), password: 'y' });
    const res = await api.post('/api/auth/login', { body });
    expect(res.status).toBe(413);
    expect(res.body).toEqual(error('Request body too large'));
  });

  it('rejects a body that is not a JSON object', async () => {
    for (const body of ['[]', '"text"', '42', 'null', 'true']) {
      const res = await api.post('/api/auth/login', { body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('Request body must be a JSON object'));
    }
  });

  it('types body fields strictly and reports unknown properties last', async () => {
    const res = await api.put('/api/auth/password', {
      token,
      body: { zzz: 1, new_password: 123456789, aaa: 2, current_password: 'x' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      error(
        'Password must be 8-128 characters; property zzz should not exist; property aaa should not exist',
      ),
    );
  });

  it('refuses prototype pollution in JSON bodies', async () => {
    const res = await api.post('/api/auth/login', {
      body: '{"__proto__": {"admin": true}, "username": "a", "password": "b"}',
    });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.data).toBeNull();
  });

  it('answers every response with a request id, and keeps a well-formed one from the caller', async () => {
    const own = await api.get('/api/health', { headers: { 'x-request-id': 'abc-123' } });
    expect(own.headers.get('x-request-id')).toBe('abc-123');
    const fresh = await api.get('/api/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends no CORS headers by default, and answers allowed origins when CORS_ORIGINS is set', async () => {
    const origin = 'https://app.example.edu';
    const plain = await api.get('/api/health', { headers: { origin } });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();

    const withCors = await startTestApp({ corsOrigins: [origin] });
    try {
      const corsApi = client(withCors.url);
      const preflight = await corsApi.request('OPTIONS', '/api/modules', {
        headers: {
          origin,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      expect(preflight.status).toBeLessThan(300);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
      const other = await corsApi.get('/api/health', { headers: { origin: 'https://evil.example.com' } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await withCors.close();
    }
  });
});

/** Mass assignment and the bounds of bodies, id lists and paging, against the real service. */
describe('mass assignment and bounds', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let member: UserRow;
  let adminToken: string;
  let memberToken: string;

  beforeEach(async () => {
    await app.reset();
    admin = await makeUser(app.dataSource, { admin: true });
    member = await makeUser(app.dataSource);
    adminToken = tokenFor(admin);
    memberToken = tokenFor(member);
  });

  const userRow = async (id: number) =>
    (await app.dataSource.query(`SELECT * FROM users WHERE id = $1`, [id]))[0] as Record<string, unknown>;
  const count = async (table: string) =>
    Number((await app.dataSource.query(`SELECT count(*)::int AS n FROM ${table}`))[0].n);

  describe('no body sets id, timestamps, the password hash or (for a non-admin) admin', () => {
    const forbidden = {
      id: 1,
      created_at: '2000-01-01T00:00:00.000Z',
      updated_at: '2000-01-01T00:00:00.000Z',
      password_hash: '$argon2id$v=19$m=19456,t=2,p=1$forged',
    };

    it.each(Object.entries(forbidden))(
      'POST /api/users with %s: 400, nothing created',
      async (field, value) => {
        const before = await count('users');
        const res = await api.post('/api/users', {
          token: adminToken,
          body: {
            username: 'massive',
            email: 'massive@example.edu',
            password: 'long-enough-password',
            [field]: value,
          },
        });
        expect(res.status).toBe(400);
        expect(res.body.message).toContain(`property ${field} should not exist`);
        expect(await count('users')).toBe(before);
      },
    );

    it.each(Object.entries(forbidden))(
      'PUT /api/users/{id} with %s: 400, row unchanged',
      async (field, value) => {
        const before = await userRow(member.id);
        const res = await api.put(`/api/users/${member.id}`, {
          token: adminToken,
          body: { email: 'changed@example.edu', [field]: value },
        });
        expect(res.status).toBe(400);
        expect(await userRow(member.id)).toEqual(before);
      },
    );

    it.each(Object.entries(forbidden))(
      'POST /api/modules with %s: 400, nothing created',
      async (field, value) => {
        const res = await api.post('/api/modules', {
          token: adminToken,
          body: { code: 'MAS101', year: 2026, credits: 15, [field]: value },
        });
        expect(res.status).toBe(400);
        expect(await count('modules')).toBe(0);
      },
    );

    it('a non-admin cannot make themselves admin through the one body they may send', async () => {
      const before = await userRow(member.id);
      const res = await api.put('/api/auth/password', {
        token: memberToken,
        body: { current_password: member.password, new_password: 'another-long-password', admin: true },
      });
      expect(res.status).toBe(400);
      expect(await userRow(member.id)).toEqual(before);
      // And the admin-only routes stay closed to them.
      const put = await api.put(`/api/users/${member.id}`, { token: memberToken, body: { admin: true } });
      expect(put.status).toBe(403);
      expect((await userRow(member.id)).admin).toBe(false);
    });
  });

  describe('JSON size and shape', () => {
    it('answers 413 to a JSON body of 1 MiB + 1 byte and 400 (not 413) to one just under 1 MiB', async () => {
      const pad = (size: number) => {
        const head = '{"code":"ABC123","year":2026,"credits":15,"description":"';
        return head + 'x'.repeat(size - head.length - 2) + '"}';
      };
      const over = await api.post('/api/modules', { token: adminToken, body: pad(1_048_577) });
      expect(over.status).toBe(413);
      expect(over.body).toEqual({ success: false, data: null, message: 'Request body too large' });
      const under = await api.post('/api/modules', { token: adminToken, body: pad(1_048_576) });
      expect(under.status).toBe(400);
      expect(await count('modules')).toBe(0);
    });

    it('answers deep nesting with a clean 400, quickly, and keeps serving', async () => {
      const depth = 200_000;
      const started = Date.now();
      const res = await api.post('/api/modules', {
        token: adminToken,
        body: `{"code":${'['.repeat(depth)}${']'.repeat(depth)},"year":2026,"credits":15}`,
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message: 'Malformed JSON body' });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect((await api.get('/api/health')).status).toBe(200);
    });

    it('answers a body with 60 000 unknown keys with a clean 400, quickly', async () => {
      const wide = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, i]));
      const started = Date.now();
      const res = await api.post('/api/modules', {
        token: adminToken,
        body: { code: 'ABC123', year: 2026, credits: 15, ...wide },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message: 'Malformed JSON body' });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await count('modules')).toBe(0);
    });
  });

  describe('id lists over their caps', () => {
    it('DELETE /api/modules/bulk with 1001 ids: 400, nothing deleted', async () => {
      await api.post('/api/modules', {
        token: adminToken,
        body: { code: 'CAP101', year: 2026, credits: 15 },
      });
      const res = await api.delete('/api/modules/bulk', {
        token: adminToken,
        body: { module_ids: Array.from({ length: 1001 }, (_, i) => i + 1) },
      });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('At most 1000 module IDs are allowed per request');
      expect(await count('modules')).toBe(1);
    });

    it('POST /api/users/bulk with 501 users: 400, nothing created', async () => {
      const before = await count('users');
      const users = Array.from({ length: 501 }, (_, i) => ({
        username: `bulk${i}`,
        email: `bulk${i}@example.edu`,
        password: 'long-enough-password',
      }));
      const res = await api.post('/api/users/bulk', { token: adminToken, body: { users } });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('At most 500 users are allowed per request');
      expect(await count('users')).toBe(before);
    });
  });

  describe('page and per_page extremes', () => {
    it.each([
      '?per_page=0',
      '?per_page=101',
      '?per_page=-1',
      '?per_page=1e400',
      '?per_page=99999999999999999999999',
      '?page=0',
      '?page=-5',
      '?page=99999999999999999999999',
      '?page=9007199254740993&per_page=100',
      '?page=1.5',
      '?per_page=',
    ])(
      'GET /api/modules%s: a 200 within the bounds or a 400 naming the parameter, never a 500',
      async (query) => {
        const res = await api.get(`/api/modules${query}`, { token: adminToken });
        expect([200, 400]).toContain(res.status);
        if (res.status === 200) {
          expect(res.body.data.per_page).toBeGreaterThanOrEqual(1);
          expect(res.body.data.per_page).toBeLessThanOrEqual(100);
          expect(res.body.data.page).toBeGreaterThanOrEqual(1);
        } else {
          expect(res.body.message).toMatch(/page|per_page/);
        }
      },
    );
  });
});

/**
 * REQUEST_TIMEOUT_MS bounds how long one request, head and body, may take to arrive. The service here runs with
 * a 1 s bound so that a trickling client is seen being cut off; everything else is the production set-up.
 */

const TIMEOUT_MS = 1000;

interface Trickle {
  /** Everything the server sent, as text. */
  received: () => string;
  /** Resolves with the milliseconds from the first byte sent to the server's close. */
  closed: Promise<number>;
  stop: () => void;
}

/** Opens a connection, sends `head` at once, then one byte of `rest` every 100 ms until the server closes. */
function trickle(url: string, head: string, rest: string): Trickle {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let received = '';
  let sent = 0;
  const started = Date.now();
  socket.on('data', (data: Buffer) => (received += data.toString('latin1')));
  socket.on('error', () => undefined);
  const timer = setInterval(() => {
    if (sent < rest.length) socket.write(rest[sent++]);
  }, 100);
  socket.write(head);
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => {
      clearInterval(timer);
      resolve(Date.now() - started);
    }),
  );
  return {
    received: () => received,
    closed,
    stop: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

/** Resolves once the server has sent a complete answer whose status line and body are in `received()`. */
async function answered(connection: Trickle, pattern: RegExp): Promise<void> {
  await waitFor(() => pattern.test(connection.received()), {
    timeoutMs: 5000,
    what: `an answer matching ${pattern}`,
    seen: () => connection.received(),
  });
}

describe('A request must arrive within REQUEST_TIMEOUT_MS', () => {
  const { app, api } = useTestApp({ requestTimeoutMs: TIMEOUT_MS });
  let adminToken: string;

  beforeAll(async () => {
    await app.reset();
    adminToken = tokenFor(await makeUser(app.dataSource, { admin: true }));
  });

  it('a client trickling a body is answered 408 and cut off, while other requests are served', async () => {
    const body = JSON.stringify({ code: 'ABC123', name: 'x'.repeat(200) });
    const slow = trickle(
      app.url,
      `POST /api/modules HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${adminToken}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    try {
      // Served while the trickling request is held open.
      const health = await api.get('/api/health');
      expect(health.status).toBe(200);
      const lived = await slow.closed;
      expect(lived).toBeGreaterThanOrEqual(TIMEOUT_MS);
      // The bound plus Node's check interval (a tenth of it), with room for a busy machine.
      expect(lived).toBeLessThan(TIMEOUT_MS + 3000);
      expect(slow.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(slow.received()).toMatch(/\r\nConnection: close\r\n/i);
      expect(JSON.parse(slow.received().split('\r\n\r\n')[1])).toEqual({
        success: false,
        data: null,
        message: 'Request timeout',
      });
    } finally {
      slow.stop();
    }
    // Nothing was created from the part that arrived, and the service still serves.
    const list = await api.get('/api/modules', { token: adminToken });
    expect(list.status).toBe(200);
    expect(list.body.data.total).toBe(0);
  });

  it('a client trickling its header lines is answered 408 and cut off', async () => {
    const slow = trickle(
      app.url,
      'GET /api/health HTTP/1.1\r\n',
      `Host: x\r\nX-Slow: ${'y'.repeat(100)}\r\n\r\n`,
    );
    try {
      const lived = await slow.closed;
      expect(lived).toBeGreaterThanOrEqual(TIMEOUT_MS);
      expect(lived).toBeLessThan(TIMEOUT_MS + 3000);
      expect(slow.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    } finally {
      slow.stop();
    }
    expect((await api.get('/api/health')).status).toBe(200);
  });

  it('the bound is per request: a keep-alive connection idle for longer serves its next request', async () => {
    const { hostname, port } = new URL(app.url);
    const socket = net.connect(Number(port), hostname);
    let received = '';
    socket.on('data', (data: Buffer) => (received += data.toString('latin1')));
    const connection: Trickle = {
      received: () => received,
      closed: Promise.resolve(0),
      stop: () => undefined,
    };
    try {
      socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
      await answered(connection, /HTTP\/1\.1 200 OK[^]*"success":true/);
      // Idle past the request bound: the time between requests is keepAliveTimeout's, not this bound's.
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 2));
      expect(socket.destroyed).toBe(false);
      socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
      await answered(
        connection,
        /HTTP\/1\.1 200 OK[^]*"success":true[^]*HTTP\/1\.1 200 OK[^]*"success":true/,
      );
    } finally {
      socket.destroy();
    }
  });

  it('after an early answer, a body still trickling is cut off without a second answer', async () => {
    const slow = trickle(
      app.url,
      // No token: the 401 needs no database, so it comes well within the bound.
      'PUT /api/users/1/avatar HTTP/1.1\r\nHost: x\r\n' +
        'Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: 1000\r\n\r\n',
      'z'.repeat(1000),
    );
    try {
      await answered(slow, /^HTTP\/1\.1 401 [^]*"Authentication required"\}$/);
      const lived = await slow.closed;
      expect(lived).toBeLessThan(TIMEOUT_MS + 3000);
      // One answer, the 401; nothing after it.
      expect(slow.received().match(/HTTP\/1\.1 /g)).toHaveLength(1);
      expect(slow.received()).toMatch(/"Authentication required"\}$/);
    } finally {
      slow.stop();
    }
  });
});

const login = (url: string, username: string, password: string, forwardedFor?: string) =>
  client(url).post('/api/auth/login', {
    body: { username, password },
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
  });

/** Ten failed logins for ten different usernames (so only the address key fills up). */
async function failTenTimes(url: string, forwardedFor: string) {
  for (let i = 0; i < 10; i++) {
    expect((await login(url, `nobody-${i}`, 'wrong-password', forwardedFor)).status).toBe(401);
  }
}

describe('TRUST_PROXY unset: the address is the socket peer, X-Forwarded-For is ignored', () => {
  const { app } = useTestApp();
  let user: UserRow;

  beforeAll(async () => {
    await app.reset();
    user = await makeUser(app.dataSource);
  });

  it('a client cannot escape the throttle by claiming another address', async () => {
    await failTenTimes(app.url, '198.51.100.1');
    // Another claimed address, the right password: still this socket's address, still blocked.
    const res = await login(app.url, user.username, DEFAULT_PASSWORD, '198.51.100.2');
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ success: false, data: null, message: 'Too many requests, try again later' });
  });
});

describe('TRUST_PROXY=127.0.0.1: behind a proxy the client address comes from X-Forwarded-For', () => {
  const { app } = useTestApp({ trustProxy: ['127.0.0.1'] });
  let user: UserRow;

  beforeAll(async () => {
    await app.reset();
    user = await makeUser(app.dataSource);
  });

  it('ten failures from one client lock that client out, not everyone behind the proxy', async () => {
    await failTenTimes(app.url, '203.0.113.5');
    expect((await login(app.url, user.username, DEFAULT_PASSWORD, '203.0.113.5')).status).toBe(429);
    expect((await login(app.url, user.username, DEFAULT_PASSWORD, '203.0.113.9')).status).toBe(200);
    // A client-supplied hop before the proxy's own entry is not trusted beyond the proxy's word.
    expect((await login(app.url, user.username, DEFAULT_PASSWORD, '203.0.113.9, 203.0.113.5')).status).toBe(
      429,
    );
  });
});

describe('TRUST_PROXY=1 (one hop)', () => {
  const { app } = useTestApp({ trustProxy: 1 });
  let user: UserRow;

  beforeAll(async () => {
    await app.reset();
    user = await makeUser(app.dataSource);
  });

  it('takes the address the nearest proxy saw', async () => {
    await failTenTimes(app.url, '192.0.2.1, 203.0.113.77');
    expect((await login(app.url, user.username, DEFAULT_PASSWORD, '203.0.113.77')).status).toBe(429);
    // What the client wrote before the proxy's entry does not matter.
    expect((await login(app.url, user.username, DEFAULT_PASSWORD, '203.0.113.77, 203.0.113.78')).status).toBe(
      200,
    );
  });
});

describe('the connection pool', () => {
  const { app, api } = useTestApp({ dbStatementTimeoutMs: 1234 });
  let token: string;

  beforeAll(async () => {
    await app.reset();
    token = tokenFor(await makeUser(app.dataSource, { admin: true }));
  });

  it('sets the configured statement timeout on its connections', async () => {
    expect(await app.dataSource.query(`SHOW statement_timeout`)).toEqual([{ statement_timeout: '1234ms' }]);
  });

  it('survives its idle connections being terminated by the server and keeps serving', async () => {
    // Open several pooled connections at once, then let them go idle.
    const warm = await Promise.all(Array.from({ length: 8 }, () => api.get('/api/users', { token })));
    expect(warm.map((res) => res.status)).toEqual(Array(8).fill(200));
    // The pool drops a client whose connection failed while idle ('error', then 'remove').
    const pool = poolOf(app.dataSource);
    let removed = 0;
    const onRemove = () => removed++;
    pool.on('remove', onRemove);
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    let count: number;
    try {
      const terminated = await admin.query<{ count: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS count FROM pg_stat_activity
         WHERE application_name = 'module-admin-service' AND datname = current_database()
           AND pid <> pg_backend_pid() AND state = 'idle'`,
      );
      count = terminated.rows[0].count;
      expect(count).toBeGreaterThan(0);
      // The pool's 'error' events for those idle clients must not crash the process.
      await waitFor(() => removed >= count, {
        timeoutMs: 5000,
        what: `the pool to drop the ${count} terminated connections`,
      });
    } finally {
      pool.off('remove', onRemove);
      await admin.end();
    }
    const after = await Promise.all(Array.from({ length: 12 }, () => api.get('/api/users', { token })));
    expect(after.map((res) => res.status)).toEqual(Array(12).fill(200));
    expect((await api.get('/api/health/ready')).status).toBe(200);
  });
});
