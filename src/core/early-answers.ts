import { type IncomingMessage } from 'node:http';
import { type FastifyInstance } from 'fastify';

/**
 * How much of an unread request body is read and thrown away after an early answer so that the connection
 * stays usable: any body the service would accept (a 2 MiB avatar with its multipart framing, a 1 MiB JSON
 * body) fits with room to spare.
 */
export const EARLY_ANSWER_DRAIN_BYTES = 4 * 1_048_576;
/** How long a client may take to send that much after the answer before the connection is closed. */
export const EARLY_ANSWER_DRAIN_MS = 5_000;
/** After the server half-closes, how long it keeps reading so that its close is not a reset. */
export const EARLY_ANSWER_LINGER_MS = 2_000;

/**
 * An answer given before the request body was read (an unknown user, no token, a body too large or of the
 * wrong type) must reach a client that is still sending that body. Closing the socket at once — what
 * `Connection: close` makes Node do — resets the connection while the client writes, and clients such as
 * Node's fetch then report a connection failure instead of the answer (EPIPE / ECONNRESET).
 *
 * So the answer goes out without `Connection: close`, the rest of the body is read and discarded, and the
 * connection is kept if it all arrives within {@link EARLY_ANSWER_DRAIN_BYTES} and
 * {@link EARLY_ANSWER_DRAIN_MS}. Otherwise the server half-closes (FIN: the client reads the answer and sees the
 * end), keeps discarding for {@link EARLY_ANSWER_LINGER_MS}, then closes.
 */
export function drainEarlyAnswers(fastify: FastifyInstance): void {
  fastify.addHook('onSend', async (request, reply) => {
    if (request.raw.complete) return;
    if (tooLargeToDrain(request.raw)) {
      // The connection ends after this answer: say so, so that no client sends another request on it. Node
      // would close it at once and reset a client still writing; a gentle close takes its place.
      void reply.header('connection', 'close');
      closeGentlyWhenDone(request.raw);
    } else if (String(reply.getHeader('connection')).toLowerCase() === 'close') {
      // Fastify's body parser asks for a close on its errors; the drain below replaces that close.
      reply.removeHeader('connection');
    }
  });
  fastify.addHook('onResponse', (request, _reply, done) => {
    if (!request.raw.complete) discardRest(request.raw);
    done();
  });
}

function tooLargeToDrain(message: IncomingMessage): boolean {
  const declared = Number(message.headers['content-length']);
  return Number.isSafeInteger(declared) && declared - message.socket.bytesRead > EARLY_ANSWER_DRAIN_BYTES;
}

/** Node ends a `Connection: close` answer with destroySoon(): a half-close with a linger replaces it. */
function closeGentlyWhenDone(message: IncomingMessage): void {
  const socket = message.socket;
  socket.destroySoon = function destroySoonGently(this: typeof socket) {
    this.end();
    this.resume();
    setTimeout(() => this.destroy(), EARLY_ANSWER_LINGER_MS).unref();
  };
}

function discardRest(message: IncomingMessage): void {
  const socket = message.socket;
  // Node discards the body of an answered request inside its parser, without 'data' events: the socket's byte
  // count is what tells how much has arrived.
  const readAtAnswer = socket.bytesRead;
  let closing = false;
  const stopWatching = () => {
    clearInterval(watch);
    clearTimeout(deadline);
  };
  // The whole body arrived: the connection serves the next request and must not be closed under it.
  const drained = () => message.complete || message.readableEnded;
  const closeGently = () => {
    stopWatching();
    if (closing || socket.destroyed || drained()) return;
    closing = true;
    socket.end();
    setTimeout(() => socket.destroy(), EARLY_ANSWER_LINGER_MS).unref();
  };
  // A body announced as larger than what is left to drain is not waited for: the end is sent at once.
  const declared = Number(message.headers['content-length']);
  if (Number.isSafeInteger(declared) && declared - readAtAnswer > EARLY_ANSWER_DRAIN_BYTES) {
    message.unpipe();
    message.resume();
    closing = true;
    socket.end();
    setTimeout(() => socket.destroy(), EARLY_ANSWER_LINGER_MS).unref();
    return;
  }
  const watch = setInterval(() => {
    if (drained()) stopWatching();
    else if (socket.bytesRead - readAtAnswer > EARLY_ANSWER_DRAIN_BYTES) closeGently();
  }, 25);
  watch.unref();
  const deadline = setTimeout(closeGently, EARLY_ANSWER_DRAIN_MS);
  deadline.unref();
  message.once('end', stopWatching);
  socket.once('close', stopWatching);
  // A reader that gave up half-way (the multipart parser after an error) may still be attached.
  message.unpipe();
  message.resume();
}
