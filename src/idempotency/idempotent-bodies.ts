import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { type FastifyPluginCallback, type FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';

/** A CSV upload is at most 5 MiB; a longer body is refused anyway, so only this much is read ahead. */
const READ_AHEAD = 6 * 1024 * 1024;

const digests = new WeakMap<FastifyRequest, Buffer>();

/** The SHA-256 of a streamed (`text/csv`) body of a request with an `Idempotency-Key`, if it had one. */
export const streamedBodyDigest = (request: FastifyRequest): Buffer | undefined => digests.get(request);

/**
 * A `text/csv` body reaches its handler as a stream, after the claim of its key must have compared it: a POST
 * with an `Idempotency-Key` has it read ahead and hashed, then handed on as the same bytes. A callback hook: an
 * async one costs every request a promise.
 */
const hashStreamedBodiesPlugin: FastifyPluginCallback = (fastify, _options, registered) => {
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    if (
      request.method !== 'POST' ||
      request.headers['idempotency-key'] === undefined ||
      !(request.headers['content-type'] ?? '').toLowerCase().startsWith('text/csv')
    ) {
      done(null, payload);
      return;
    }
    readAhead(request, payload).then(
      (stream) => done(null, stream),
      (error: Error) => done(error),
    );
  });
  registered();
};
export const hashStreamedBodies = fastifyPlugin(hashStreamedBodiesPlugin, { name: 'hash-streamed-bodies' });

/** The body read and hashed, as a stream of the same bytes; past {@link READ_AHEAD}, unhashed. */
async function readAhead(request: FastifyRequest, payload: AsyncIterable<unknown>): Promise<Readable> {
  const chunks: Buffer[] = [];
  let length = 0;
  const hash = createHash('sha256');
  const iterator = payload[Symbol.asyncIterator]();
  for (;;) {
    if (length > READ_AHEAD) {
      // Too large to be taken: no digest, and the rest follows what was read.
      return Readable.from(
        (async function* () {
          yield* chunks;
          for (let next = await iterator.next(); !next.done; next = await iterator.next())
            yield next.value as Buffer;
        })(),
      );
    }
    const next = await iterator.next();
    if (next.done === true) break;
    const chunk = next.value as Buffer;
    chunks.push(chunk);
    hash.update(chunk);
    length += chunk.length;
  }
  digests.set(request, hash.digest());
  return Readable.from(chunks);
}
