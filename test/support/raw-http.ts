// HTTP spoken by hand on a socket: a request that keeps writing its body, and a keep-alive connection that carries
// several requests in order.
import net from 'node:net';

export interface RawAnswer {
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
export function rawRequest(
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

export interface ParsedAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/**
 * One keep-alive connection spoken by hand: requests are written in order and their answers read in order, so a
 * test can put several requests on the same socket, as a pooling client does.
 */
export class RawConnection {
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
