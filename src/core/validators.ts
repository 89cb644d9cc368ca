import { createHash } from 'node:crypto';
import { SetMetadata } from '@nestjs/common';
import { WithMessage } from './decorators.js';
import { AppError, fixedError } from './errors.js';
import { JsonText } from './json-text.js';

export const SINGLE_READ = 'singleRead';

/** Marks a single read: its answer gets a strong `ETag` and `Cache-Control`, and honours If-None-Match (§17). */
export const SingleRead = () => SetMetadata(SINGLE_READ, true);

export const PRECONDITION_FAILED_MESSAGE = 'The resource has changed; reload it and try again';
export const PRECONDITION_REQUIRED_MESSAGE =
  'Precondition required: send If-Match with the ETag of your last read';

export class PreconditionFailed extends fixedError(412, PRECONDITION_FAILED_MESSAGE) {}
export class PreconditionRequired extends fixedError(428, PRECONDITION_REQUIRED_MESSAGE) {}

/** Not an error: the exception filter answers it with an empty 304, keeping the headers already set. */
export class NotModified extends AppError {
  constructor() {
    super(304, 'Not Modified');
  }
}

/** The strong ETag of an answer's `data`: a hash of its exact JSON text, so every change of the body reaches it. */
export function etagOf(result: unknown): string {
  const hash = createHash('sha256');
  if (result instanceof JsonText) {
    // The parts in order, never joined: a large module read is not copied once more.
    for (const part of result.parts) hash.update(part);
  } else {
    const data = result instanceof WithMessage ? (result as WithMessage<unknown>).data : result;
    hash.update(JSON.stringify(data ?? null));
  }
  return `"${hash.digest('base64url').slice(0, 22)}"`;
}

/** Whether an If-None-Match / If-Match list (comma-separated, `W/` accepted) names `etag` or is `*`. */
export function listMatches(header: string, etag: string): boolean {
  for (const raw of header.split(',')) {
    const tag = raw.trim();
    if (tag === '*') return true;
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}
