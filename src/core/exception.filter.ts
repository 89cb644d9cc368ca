import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import {
  AppError,
  CONTENT_LENGTH_MISMATCH_MESSAGE,
  errorEnvelope,
  INTERNAL_ERROR_MESSAGE,
  InternalFailure,
  MALFORMED_JSON_MESSAGE,
  REQUEST_BODY_TOO_LARGE_MESSAGE,
  REQUEST_NOT_PROCESSED_MESSAGE,
  ROUTE_NOT_FOUND_MESSAGE,
  UNSUPPORTED_CONTENT_TYPE_MESSAGE,
} from './errors.js';
import { ownAnswersOf } from './own-answers.js';
import { NotModified } from './validators.js';

interface FrameworkError {
  code?: string;
  statusCode?: number;
}

/** Fastify's own errors (body parsing, limits) by code, with the contract's messages. */
const FRAMEWORK_ERRORS: Record<string, [number, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, UNSUPPORTED_CONTENT_TYPE_MESSAGE],
  FST_ERR_CTP_INVALID_TYPE: [415, UNSUPPORTED_CONTENT_TYPE_MESSAGE],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, REQUEST_BODY_TOO_LARGE_MESSAGE],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, MALFORMED_JSON_MESSAGE],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, MALFORMED_JSON_MESSAGE],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, CONTENT_LENGTH_MISMATCH_MESSAGE],
  FST_ERR_CTP_EMPTY_TYPE: [415, UNSUPPORTED_CONTENT_TYPE_MESSAGE],
};

/** Maps an HTTP status the framework chose to the contract's message. */
function frameworkMessage(status: number): string {
  switch (status) {
    case 400:
      return MALFORMED_JSON_MESSAGE;
    case 404:
    case 405:
      return ROUTE_NOT_FOUND_MESSAGE;
    case 413:
      return REQUEST_BODY_TOO_LARGE_MESSAGE;
    case 415:
      return UNSUPPORTED_CONTENT_TYPE_MESSAGE;
    default:
      return status >= 500 ? INTERNAL_ERROR_MESSAGE : REQUEST_NOT_PROCESSED_MESSAGE;
  }
}

function toErrorResponse(error: unknown): { status: number; message: string; data: unknown } {
  if (error instanceof AppError) return { status: error.status, message: error.message, data: error.data };
  const { code, statusCode } = (error ?? {}) as FrameworkError;
  if (code && FRAMEWORK_ERRORS[code]) {
    const [status, message] = FRAMEWORK_ERRORS[code];
    return { status, message, data: null };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus() === 405 ? 404 : error.getStatus();
    return { status, message: frameworkMessage(status), data: null };
  }
  // A JSON body that fails to parse: a SyntaxError with status 400 from Fastify's parser.
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return { status: statusCode, message: frameworkMessage(statusCode), data: null };
  }
  return { status: 500, message: INTERNAL_ERROR_MESSAGE, data: null };
}

/** The one place errors become responses: always the envelope, never a stack, SQL text or driver message. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    // A 304 has no body; its ETag and Cache-Control are already on the reply (envelope.interceptor.ts).
    if (error instanceof NotModified) {
      void reply.status(304).send();
      return;
    }
    const request = host.switchToHttp().getRequest<FastifyRequest | undefined>();
    const { status, message, data } = toErrorResponse(error);
    if (status >= 500) {
      const cause = error instanceof InternalFailure ? error.reason : error;
      // Through the request's logger: the line carries the request id and the caller. Only these fields: a
      // driver error also holds the statement's parameters (a password hash, say), which never reach a log.
      const err =
        cause instanceof Error
          ? {
              type: cause.name,
              message: cause.message,
              code: (cause as { code?: unknown }).code,
              stack: cause.stack,
            }
          : { message: String(cause) };
      const log = request?.log ?? undefined;
      if (log) log.error({ err }, 'Request failed');
      else this.logger.error(err.message, 'stack' in err ? err.stack : undefined);
    }
    // The one exception to the envelope: a route with answers of its own (SCIM, docs/api.md §14).
    const own = ownAnswersOf(request);
    if (own !== undefined) {
      const answer = own.error(status, message, error);
      void reply.status(status).type(answer.contentType).send(answer.body);
      return;
    }
    void reply.status(status).send(errorEnvelope(message, data));
  }
}
