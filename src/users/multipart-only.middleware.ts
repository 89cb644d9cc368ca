import { type IncomingMessage, type ServerResponse } from 'node:http';
import { Injectable, type NestMiddleware } from '@nestjs/common';
import { NotMultipart } from './users.errors.js';

/** Whether a Content-Type header names `multipart/form-data` (any parameters, any case). */
export function isMultipartFormData(contentType: string | undefined): boolean {
  return contentType?.split(';', 1)[0].trim().toLowerCase() === 'multipart/form-data';
}

/**
 * Upload routes take multipart only. Middleware runs before the guards, so a request of another content type is
 * answered 415 before authentication, as the framing of the body is (docs/api.md §1, step 0).
 */
@Injectable()
export class MultipartOnlyMiddleware implements NestMiddleware {
  use(request: IncomingMessage, _response: ServerResponse, next: (error?: unknown) => void): void {
    // Passed to `next`, not thrown: Fastify's error handler then answers with the reply the filter expects.
    next(isMultipartFormData(request.headers['content-type']) ? undefined : new NotMultipart());
  }
}
