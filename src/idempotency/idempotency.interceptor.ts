import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  StreamableFile,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { type AuthUser } from '../core/decorators.js';
import { AppError, fixedError, ValidationFailed } from '../core/errors.js';
import { routeMetadata } from '../core/route-metadata.js';
import {
  IDEMPOTENCY_KEY,
  INVALID_IDEMPOTENCY_KEY_MESSAGE,
  KEY_IN_PROGRESS_MESSAGE,
  KEY_REUSED_MESSAGE,
  requestFingerprint,
  withoutSecrets,
} from './fingerprint.js';
import { IdempotencyRepository } from './idempotency.repository.js';
import { streamedBodyDigest } from './idempotent-bodies.js';

export class IdempotencyKeyReused extends fixedError(422, KEY_REUSED_MESSAGE) {}
export class IdempotencyKeyInProgress extends fixedError(409, KEY_IN_PROGRESS_MESSAGE) {}

/**
 * `Idempotency-Key` on every POST of the API but SCIM's and the login (docs/api.md §17): after the guards
 * (401, 403) and before the pipes (400), the key is checked and claimed in PostgreSQL; a repeat of a remembered
 * 2xx is answered from there without running the handler, so nothing is done twice, on any replica. Registered
 * before the envelope interceptor, so it sees (and remembers) the answer as it is sent.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: IdempotencyRepository,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest & { user?: AuthUser }>();
    const raw = request.headers['idempotency-key'];
    if (request.method !== 'POST' || raw === undefined) return next.handle();
    const { isPublic, bare } = routeMetadata(this.reflector, context);
    if (isPublic || bare || request.user === undefined) return next.handle();
    const key = Array.isArray(raw) ? raw.join(', ') : raw;
    if (!IDEMPOTENCY_KEY.test(key)) throw new ValidationFailed(INVALID_IDEMPOTENCY_KEY_MESSAGE);
    const caller = callerOf(request.user);
    const reply = http.getResponse<FastifyReply>();
    const body = request.isMultipart() ? null : (streamedBodyDigest(request) ?? request.body);
    const fingerprint = requestFingerprint(request.method, request.url, body);
    return new Observable((subscriber) => {
      let subscription: { unsubscribe(): void } | undefined;
      const fail = (error: unknown) => subscriber.error(error);
      const run = () => {
        subscription = next.handle().subscribe({
          next: (answer: unknown) => {
            // A handler answers once: the answer is sent once it is remembered.
            this.remember(caller, key, reply.statusCode, answer).then(() => {
              subscriber.next(answer);
              subscriber.complete();
            }, fail);
          },
          error: (error: unknown) => {
            this.keys.release(caller, key).then(
              () => fail(error),
              () => fail(error),
            );
          },
          complete: () => undefined,
        });
      };
      this.claim(caller, key, fingerprint).then((held) => {
        if (held === 'claimed') return run();
        void reply.status(held.status).header('idempotent-replayed', 'true');
        void reply.type('application/json; charset=utf-8');
        subscriber.next(held.body);
        subscriber.complete();
      }, fail);
      return () => subscription?.unsubscribe();
    });
  }

  /** Holds the key for this request, or the remembered answer to replay; 422 or 409 otherwise. */
  private async claim(
    caller: string,
    key: string,
    fingerprint: Buffer,
  ): Promise<'claimed' | { status: number; body: string }> {
    // Twice at most: a key released between the failed claim and the read can be claimed again.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      if (await this.keys.claim(caller, key, fingerprint)) return 'claimed';
      const held = await this.keys.held(caller, key);
      if (held === undefined) continue;
      if (!held.fingerprint.equals(fingerprint)) throw new IdempotencyKeyReused();
      if (held.status === null || held.body === null) throw new IdempotencyKeyInProgress();
      return { status: held.status, body: held.body };
    }
    throw new IdempotencyKeyInProgress();
  }

  /** Completes the claim with a 2xx JSON answer (its secrets nulled); releases it for anything else. */
  private async remember(caller: string, key: string, status: number, answer: unknown): Promise<void> {
    const text = answerText(answer);
    if (status < 200 || status > 299 || text === undefined) return this.keys.release(caller, key);
    await this.keys.complete(caller, key, status, JSON.stringify(withoutSecrets(JSON.parse(text))));
  }
}

/** Keys are per caller: a person, or an integration token. */
function callerOf(user: AuthUser): string {
  return user.integration ? `token:${user.integration.tokenId}` : `user:${user.id}`;
}

/** The JSON text the answer is sent as; undefined for a file. */
function answerText(answer: unknown): string | undefined {
  if (answer instanceof StreamableFile || answer instanceof AppError) return undefined;
  if (typeof answer === 'string') return answer;
  if (Buffer.isBuffer(answer)) return answer.toString('utf8');
  return JSON.stringify(answer ?? null);
}
