import { createParamDecorator, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { type FastifyRequest } from 'fastify';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { JsonText } from './json-text.js';
import { etagOf, listMatches, PreconditionFailed, PreconditionRequired } from './validators.js';

/** The request's `If-Match` header, undefined when absent. */
export const IfMatch = createParamDecorator((_: unknown, context: ExecutionContext): string | undefined => {
  const header = context.switchToHttp().getRequest<FastifyRequest>().headers['if-match'];
  return Array.isArray(header) ? header.join(',') : header;
});

/**
 * `If-Match` on the writes of docs/api.md §17. Called first in the handler: after the guards (401/403) and the
 * pipes (400); the single read throws the 404; the operation's own 409s come after.
 */
@Injectable()
export class Preconditions {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async check(ifMatch: string | undefined, read: () => Promise<unknown>): Promise<void> {
    if (ifMatch === undefined) {
      if (this.config.requireIfMatch) throw new PreconditionRequired();
      return;
    }
    // `*` matches any current representation: the operation's own 404 still answers a missing one.
    if (ifMatch.trim() === '*') return;
    if (!listMatches(ifMatch, await currentETag(read))) throw new PreconditionFailed();
  }
}

/** The ETag the single read gives now. */
export async function currentETag(read: () => Promise<unknown>): Promise<string> {
  const result = await read();
  // A JSON text read that is not sent is released at once (answer-budget.ts).
  if (result instanceof JsonText) result.sent?.();
  return etagOf(result);
}
