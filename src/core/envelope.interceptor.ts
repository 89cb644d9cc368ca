import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
  StreamableFile,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Observable } from 'rxjs';
import { freeWhenClosed } from './answer-bytes.js';
import { AppError, InternalFailure } from './errors.js';
import { WithMessage } from './decorators.js';
import { JsonText } from './json-text.js';
import { pageCountsOf, pageLinks } from './paging-links.js';
import { routeMetadata } from './route-metadata.js';
import { etagOf, listMatches, NotModified } from './validators.js';

/** The envelope's `,"message":…}` tail of a JSON text answer, per message (a route has one). */
const tails = new Map<string, string>();
function tail(message: string): string {
  let text = tails.get(message);
  if (text === undefined) tails.set(message, (text = `,"message":${JSON.stringify(message)}}`));
  return text;
}

/**
 * Wraps every handler result as `{ success: true, data, message }` and turns an unexpected error
 * (a database failure) into the route's 500 message; files pass through untouched, and JSON text (JsonText) is
 * wrapped as text.
 *
 * One subscriber does the mapping and the error translation: rxjs' `map` and `catchError` would add two
 * operator subscribers (and their subscriptions) per request.
 */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const { message, failure, bare, paged, singleRead } = routeMetadata(this.reflector, context);
    const handled = next.handle();
    return new Observable((subscriber) =>
      handled.subscribe({
        next: (result: unknown) => {
          let wrapped: unknown;
          try {
            if (paged) this.linkPages(result, context);
            if (singleRead) validate(result, context);
            wrapped = bare ? result : wrap(result, message, context);
          } catch (error) {
            subscriber.error(error instanceof AppError ? error : new InternalFailure(failure, error));
            return;
          }
          subscriber.next(wrapped);
        },
        error: (error: unknown) =>
          subscriber.error(error instanceof AppError ? error : new InternalFailure(failure, error)),
        complete: () => subscriber.complete(),
      }),
    );
  }

  /** The `Link` header of a paged list: absolute URLs, PUBLIC_BASE_URL else the request's scheme and host. */
  private linkPages(result: unknown, context: ExecutionContext): void {
    const counts = result instanceof JsonText ? result.page : pageCountsOf(result);
    if (counts === undefined) throw new Error('A paged list answered without page, per_page and total');
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const base = this.config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
    void http.getResponse<FastifyReply>().header('link', pageLinks(base, request.url, counts));
  }
}

/**
 * The validators of a single read (docs/api.md §17): its ETag and Cache-Control, and a 304 when If-None-Match names
 * the ETag. Here, after the guards and the handler, so a 304 never answers a 401, 403 or 404.
 */
function validate(result: unknown, context: ExecutionContext): void {
  const http = context.switchToHttp();
  const etag = etagOf(result);
  void http.getResponse<FastifyReply>().header('etag', etag).header('cache-control', 'private, no-cache');
  const request = http.getRequest<FastifyRequest>();
  const ifNoneMatch = request.headers['if-none-match'];
  if (request.method !== 'GET' || ifNoneMatch === undefined || !listMatches(ifNoneMatch, etag)) return;
  if (result instanceof JsonText) {
    result.sent?.();
    result.release();
  }
  throw new NotModified();
}

/** The envelope's `{"success":true,"data":` head of a JSON text answer. */
const HEAD = '{"success":true,"data":';
/** From this many characters on, a JSON text answer is written into one Buffer instead of joined as a string. */
const LARGE_JSON_TEXT = 16_384;

/**
 * The envelope around JSON text. A large one is copied part by part into one Buffer, which lives outside V8's
 * heap and goes with its request: joined as a string it would be flattened into a second copy of the body in
 * V8's large-object space, where dead copies pile up until a full collection (docs/performance.md, memory).
 * Such a Buffer has an ArrayBuffer of its own (Node's shared pool serves 4 KiB at most), which `freeWhenClosed`
 * relies on.
 */
function envelopeText(parts: readonly string[], end: string): string | Buffer {
  let length = HEAD.length + end.length;
  for (const part of parts) length += part.length;
  if (length < LARGE_JSON_TEXT) return HEAD + parts.join('') + end;
  let bytes = Buffer.byteLength(HEAD) + Buffer.byteLength(end);
  for (const part of parts) bytes += Buffer.byteLength(part);
  const body = Buffer.allocUnsafe(bytes);
  let at = body.write(HEAD, 0);
  for (const part of parts) at += body.write(part, at);
  body.write(end, at);
  return body;
}

function wrap(result: unknown, message: string, context: ExecutionContext): unknown {
  if (result instanceof StreamableFile) return result;
  if (result instanceof JsonText) {
    // Fastify sends a string or a Buffer with a JSON content type as it is.
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    reply.type('application/json; charset=utf-8');
    if (result.sent !== undefined) {
      // 'close' follows the last byte written, or a connection lost before it.
      if (reply.raw.destroyed) result.sent();
      else reply.raw.once('close', result.sent);
    }
    const body = envelopeText(result.parts, tail(message));
    result.release();
    if (typeof body !== 'string') freeWhenClosed(reply.raw, body);
    return body;
  }
  if (result instanceof WithMessage) {
    const { data, message: custom } = result as WithMessage<unknown>;
    return { success: true, data: data ?? null, message: custom };
  }
  return { success: true, data: result ?? null, message };
}
