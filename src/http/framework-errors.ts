import { type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * Fastify's router answers a few URLs itself, before any hook, filter or route runs, with a body of its own:
 * a path that is not valid percent-encoding (`/api/modules/%E0`) and a path parameter over `maxParamLength`.
 * This keeps those answers in the envelope (docs/api.md §1) and in the check order: a path id is step (3), a 400.
 */
export function answerFrameworkError(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'A path parameter is too long'
      : 'Malformed URL: the path is not valid percent-encoding';
  void reply
    .code(400)
    .header('content-type', 'application/json; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .send({ success: false, data: null, message });
}
