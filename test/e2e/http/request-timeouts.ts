// Part of test/http.e2e-spec.ts: a request must arrive within REQUEST_TIMEOUT_MS.
import net from 'node:net';
import { type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { failure } from '../../support/http.js';
import { waitFor } from '../../support/wait-for.js';

/**
 * REQUEST_TIMEOUT_MS bounds how long one request, head and body, may take to arrive. The service here runs with
 * a 1 s bound so that a trickling client is seen being cut off; everything else is the production set-up.
 */

export const TIMEOUT_MS = 1000;

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

export function requestTimeoutTests({ app, api }: UsedTestApp): void {
  let adminToken: string;

  beforeAll(async () => {
    ({ token: adminToken } = await freshAdmin(app));
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
      expect(JSON.parse(slow.received().split('\r\n\r\n')[1])).toEqual(failure('Request timeout'));
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
}
