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
 * `If-Match` on the writes of docs/api.md §17: after the guards (401/403) and the pipes (400), the 404, and the
 * operation's own 403s; before its 409s.
 */
@Injectable()
export class Preconditions {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /**
   * The check a write runs once it holds its row (users, webhooks): 428 at once when If-Match is required and
   * absent; undefined when there is nothing to compare (no header, or `*`).
   */
  expect(ifMatch: string | undefined): Precondition | undefined {
    if (ifMatch === undefined) {
      if (this.config.requireIfMatch) throw new PreconditionRequired();
      return undefined;
    }
    if (ifMatch.trim() === '*') return undefined;
    return (current) => {
      if (!listMatches(ifMatch, etagOf(current))) throw new PreconditionFailed();
    };
  }

  /**
   * The check of a write whose body is not one row (a module's read holds its members, whose rows other writes
   * change): the single read now, before the write. Not atomic with it (docs/decisions.md, "ETags").
   */
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

/**
 * The If-Match check of a write that holds its row: called with the resource as its single read would answer it
 * now, read after the row was locked in the write's transaction, so no change can land between the check and the
 * write. Throws 412 when no ETag of the header is current.
 */
export type Precondition = (current: unknown) => void;

/** The ETag the single read gives now. */
export async function currentETag(read: () => Promise<unknown>): Promise<string> {
  const result = await read();
  if (!(result instanceof JsonText)) return etagOf(result);
  // A JSON text read that is not sent gives its budget back at once (answer-budget.ts) and lets go of its text.
  result.sent?.();
  const etag = etagOf(result);
  result.release();
  return etag;
}
