import { type ServerOptions } from 'node:http';
import { type Socket } from 'node:net';
import { type FastifyInstance } from 'fastify';
import { answeredWhileReceiving } from './early-answers.js';

/** Node's bound on the request head alone, kept as it is unless the whole request must arrive sooner. */
const HEADERS_TIMEOUT_MS = 60_000;
const MESSAGE = 'Request timeout';

/**
 * Fastify options bounding how long one request may take to arrive, head and body: Node's `requestTimeout`,
 * counted from the request's first byte to its last. It is neither an idle timeout (a client trickling a byte
 * now and then would reset that) nor a connection lifetime: an idle keep-alive connection is governed by
 * `keepAliveTimeout`, and answers (downloads, exports, long polls) are not bounded by it. Fastify turns Node's
 * default of 300 s off (0); this sets it back to the configured bound.
 */
export function requestTimeoutOptions(requestTimeoutMs: number): {
  requestTimeout: number;
  http: ServerOptions;
} {
  return {
    requestTimeout: requestTimeoutMs,
    http: {
      requestTimeout: requestTimeoutMs,
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs),
      // Node checks for overdue requests every 30 s by default: a short bound would be kept only that coarsely.
      connectionsCheckingInterval: Math.min(30_000, Math.ceil(requestTimeoutMs / 10)),
    },
  };
}

/**
 * A request that did not arrive in time is answered 408 in the envelope and its connection closed. Node hands
 * it over as a `clientError`; Fastify's own answer is not in the envelope and, after an early answer whose body
 * is still being discarded, would be a second answer to one request: there the connection is closed without one.
 */
export function answerRequestTimeouts(fastify: FastifyInstance): void {
  // Ahead of Fastify's listener, which leaves a socket destroyed here alone.
  fastify.server.prependListener('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code !== 'ERR_HTTP_REQUEST_TIMEOUT' || socket.destroyed) return;
    fastify.log.info({ ip: socket.remoteAddress }, 'request not received in time: connection closed');
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent: boolean } | null })._httpMessage;
    if (socket.writable && !answeredWhileReceiving(socket) && !inFlight?.headersSent) {
      const body = JSON.stringify({ success: false, data: null, message: MESSAGE });
      socket.write(
        'HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json; charset=utf-8\r\n' +
          'X-Content-Type-Options: nosniff\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  });
}
