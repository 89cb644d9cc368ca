import { spawn } from 'node:child_process';
import net from 'node:net';
import { useTestApp } from './support/app.js';
import { makeUser, tokenFor, type UserRow } from './support/factories.js';
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
