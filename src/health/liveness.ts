import { type FastifyInstance, type RouteHandlerMethod } from 'fastify';

/** `GET /api/health`'s answer (docs/api.md §6): the envelope around `"OK"`, the same bytes on every call. */
export const LIVENESS_BODY = JSON.stringify({ success: true, data: 'OK', message: 'Health check passed' });

const answerLiveness: RouteHandlerMethod = (_request, reply) =>
  reply.type('application/json; charset=utf-8').send(LIVENESS_BODY);

/**
 * Liveness is answered by Fastify's route itself: the handler Nest registers for `HealthController.live` (which
 * keeps its place in the OpenAPI document) is replaced, as the route is added, by one that sends the fixed answer.
 * It skips Nest's pipeline (guards, pipe, interceptor, filter), which has nothing to check on a public route
 * without input; Fastify's hooks still run, so the answer keeps its headers (security, request id), its log line
 * and its metrics. Nest's pipeline was about a fifth of the route's CPU (docs/performance.md, eighth round).
 * Call before the application is initialised (before any route is added).
 */
export function answerLivenessInFastify(fastify: FastifyInstance, path: string): void {
  fastify.addHook('onRoute', (route) => {
    if (route.url === path && route.method === 'GET') route.handler = answerLiveness;
  });
}
