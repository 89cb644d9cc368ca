import { type FastifyPluginCallback } from 'fastify';
import fastifyPlugin from 'fastify-plugin';

/**
 * Every answer names its request (`X-Request-Id`), as the logs do. Callback hooks: an async one costs a promise
 * per request.
 */
const requestIdPlugin: FastifyPluginCallback = (fastify, _options, registered) => {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  // Middleware (the multipart-only check) can answer before the hook above ran.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (!reply.hasHeader('x-request-id')) void reply.header('x-request-id', request.id);
    done(null, payload);
  });
  registered();
};
export const requestId = fastifyPlugin(requestIdPlugin, { name: 'request-id' });
