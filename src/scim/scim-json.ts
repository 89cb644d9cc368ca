import { type FastifyInstance } from 'fastify';
import { AppError, UNSUPPORTED_CONTENT_TYPE_MESSAGE } from '../core/errors.js';
import { ownAnswersOf } from '../core/own-answers.js';
import { SCIM_CONTENT_TYPE } from './scim.errors.js';

/**
 * `application/scim+json` bodies (RFC 7644 §3.1) are parsed as JSON, within the same 1 MiB limit, on the routes
 * that answer SCIM; every other route keeps answering 415 to that type (docs/api.md §1).
 */
export function registerScimJsonParser(fastify: FastifyInstance): void {
  const json = fastify.getDefaultJsonParser('error', 'error');
  fastify.addContentTypeParser(SCIM_CONTENT_TYPE, { parseAs: 'string' }, (request, body, done) => {
    if (ownAnswersOf(request) === undefined) {
      done(new AppError(415, UNSUPPORTED_CONTENT_TYPE_MESSAGE), undefined);
      return;
    }
    void json(request, body as string, done);
  });
}
