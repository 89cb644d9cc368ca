import { type IncomingMessage, type ServerResponse } from 'node:http';
import { UnsupportedContentType } from './upload.errors.js';

/** The media type of a Content-Type header, lower-cased and without parameters. */
const mediaType = (header: string | undefined) => header?.split(';', 1)[0].trim().toLowerCase();

/** Whether a Content-Type header names one of `types` (lower-case; any parameters, any case in the header). */
export function hasMediaType(header: string | undefined, types: readonly string[]): boolean {
  const type = mediaType(header);
  return type !== undefined && types.includes(type);
}

/**
 * Middleware for upload routes, which take the given media types only. Middleware runs before the guards, so a
 * request of another content type is answered 415 before authentication, as the framing of the body is
 * (docs/api.md §1, step 0).
 */
export function contentTypeOnly(...types: string[]) {
  return function contentTypeOnly(
    request: IncomingMessage,
    _response: ServerResponse,
    next: (error?: unknown) => void,
  ): void {
    // Passed to `next`, not thrown: Fastify's error handler then answers with the reply the filter expects.
    next(hasMediaType(request.headers['content-type'], types) ? undefined : new UnsupportedContentType());
  };
}
