import { applyDecorators, SetMetadata } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { type FastifyRequest } from 'fastify';

/** How a route with answers of its own writes an error: the body and its content type. */
export interface OwnErrorAnswer {
  body: unknown;
  contentType: string;
}

/**
 * The answers of a route that is the one exception to the envelope (docs/api.md §1): SCIM's routes (§14) answer
 * bare resources and errors of their protocol. `error` gets the status and message the exception filter chose
 * (framing errors of the HTTP layer included) and the error itself.
 */
export interface OwnAnswers {
  error(status: number, message: string, error: unknown): OwnErrorAnswer;
}

export const OWN_ANSWERS = 'ownAnswers';

/**
 * Marks a handler whose success is sent as it returns it (no envelope) and whose errors are written by
 * `answers`. Kept in two places: the handler's metadata for the envelope interceptor, and Fastify's route
 * config, which the exception filter reads even for errors raised before Nest's handler runs (a malformed body,
 * a content type the route does not take, a body over the limit).
 */
export const WithOwnAnswers = (answers: OwnAnswers) =>
  applyDecorators(SetMetadata(OWN_ANSWERS, answers), RouteConfig({ [OWN_ANSWERS]: answers }));

/** The answers of the route a request reached, if it has its own. */
export function ownAnswersOf(request: FastifyRequest | undefined): OwnAnswers | undefined {
  const config = request?.routeOptions?.config as Record<string, unknown> | undefined;
  return config?.[OWN_ANSWERS] as OwnAnswers | undefined;
}
