import { type IncomingMessage } from 'node:http';
import { type Socket } from 'node:net';
import { type FastifyInstance } from 'fastify';

/**
 * How much of an unread request body is read and thrown away after an early answer so that the connection
 * stays usable: any body the service would accept (a 2 MiB avatar with its multipart framing, a 1 MiB JSON
 * body) fits with room to spare.
 */
const EARLY_ANSWER_DRAIN_BYTES = 4 * 1_048_576;
/** How long a client may take to send that much after the answer before the connection is closed. */
const EARLY_ANSWER_DRAIN_MS = 5_000;
/** After the server half-closes, how long it keeps reading so that its close is not a reset. */
const EARLY_ANSWER_LINGER_MS = 2_000;

/**
 * The socket's byte count when the request's head had been parsed. A keep-alive socket's count includes every
 * earlier request on it; only what it read since this mark can be this request's body.
 */
const readAtHead = new WeakMap<IncomingMessage, number>();
/** The request whose body a socket is discarding after a keep-alive early answer. */
const draining = new WeakMap<Socket, IncomingMessage>();

/**
 * An answer given before the request body was read (an unknown user, no token, a body too large or of the
 * wrong type) must reach a client that is still sending that body. Closing the socket at once — what
 * `Connection: close` makes Node do — resets the connection while the client writes, and clients such as
 * Node's fetch then report a connection failure instead of the answer (EPIPE / ECONNRESET).
 *
 * The answer says what happens next, and the server keeps to it:
 * - a body declared (Content-Length) with at most {@link EARLY_ANSWER_DRAIN_BYTES} still to come is answered
 *   without `Connection: close`; the rest is read and discarded and the connection serves the next request. A
 *   client that takes longer than {@link EARLY_ANSWER_DRAIN_MS} to send it is still sending, so it has no other
 *   request on the connection when the server half-closes it.
 * - a larger body, or one without a declared length (chunked: how much follows is unknown), is answered with
 *   `Connection: close`; the server half-closes after the answer (FIN: the client reads the answer and sees the
 *   end), keeps discarding for {@link EARLY_ANSWER_LINGER_MS}, then closes.
 *
 * A keep-alive answer followed by a close is the race this avoids: a pooling client (Node's fetch) reuses the
 * connection for its next request the moment the answer and its own body are done, and the close then fails
 * that request (`UND_ERR_SOCKET`, "other side closed"). docs/decisions.md tells how it was found.
 */
export function drainEarlyAnswers(fastify: FastifyInstance): void {
  // Ahead of Fastify's listener, while the socket has read no further than the chunk holding this head: the
  // mark may count up to one read (64 KiB) of the body as read before it, never a byte of an earlier request.
  fastify.server.prependListener('request', (message: IncomingMessage) => {
    readAtHead.set(message, message.socket.bytesRead);
  });
  // A callback hook: an async one costs a promise per request, and nearly every request has no body left.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (!bodyUnread(request.raw)) {
      done(null, payload);
      return;
    }
    if (!drainable(request.raw)) {
      // The connection ends after this answer: say so, so that no client sends another request on it. Node
      // would close it at once and reset a client still writing; a gentle close takes its place.
      void reply.header('connection', 'close');
      closeGentlyWhenDone(request.raw.socket);
    } else if (String(reply.getHeader('connection')).toLowerCase() === 'close') {
      // Fastify's body parser asks for a close on its errors; the drain below replaces that close.
      reply.removeHeader('connection');
    }
    done(null, payload);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    if (bodyUnread(request.raw)) discardRest(request.raw, reply.getHeader('connection') !== 'close');
    done();
  });
}

/**
 * Whether the socket is discarding the body of a request already answered (a keep-alive early answer): a
 * request timeout there must not write a second answer.
 */
export function answeredWhileReceiving(socket: Socket): boolean {
  const message = draining.get(socket);
  return message !== undefined && !message.complete;
}

/** A request with a body (declared, or chunked) of which the parser has not seen the end. */
function bodyUnread(message: IncomingMessage): boolean {
  if (message.complete) return false;
  const declared = Number(message.headers['content-length'] ?? 0);
  return message.headers['transfer-encoding'] !== undefined || declared > 0;
}

/** Whether what is left of a declared body fits the drain. */
function drainable(message: IncomingMessage): boolean {
  if (message.headers['transfer-encoding'] !== undefined) return false;
  const declared = Number(message.headers['content-length']);
  const mark = readAtHead.get(message);
  if (!Number.isSafeInteger(declared) || mark === undefined) return false;
  return declared - (message.socket.bytesRead - mark) <= EARLY_ANSWER_DRAIN_BYTES;
}

/** Node ends a `Connection: close` answer with destroySoon(): a half-close with a linger replaces it. */
function closeGentlyWhenDone(socket: Socket): void {
  socket.destroySoon = function destroySoonGently(this: Socket) {
    endGently(this);
  };
}

function endGently(socket: Socket): void {
  socket.end();
  socket.resume();
  setTimeout(() => socket.destroy(), EARLY_ANSWER_LINGER_MS).unref();
}

function discardRest(message: IncomingMessage, keepAlive: boolean): void {
  // A reader that gave up half-way (the multipart parser after an error) may still be attached. Node discards
  // the rest inside its parser; the connection then serves the next request, or ends as the answer said.
  message.unpipe();
  message.resume();
  if (!keepAlive) return;
  const socket = message.socket;
  draining.set(socket, message);
  setTimeout(() => {
    // Once the body is complete the connection belongs to the next request and is never closed under it.
    if (!message.complete && !socket.destroyed) endGently(socket);
  }, EARLY_ANSWER_DRAIN_MS).unref();
}
