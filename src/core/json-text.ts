import { type PageCounts } from './paging-links.js';
import { type Paging } from './query.js';

/**
 * A handler result that is already JSON text, built by PostgreSQL for a large body (a module with thousands of
 * people): the envelope interceptor writes the envelope around it, so the service neither parses the rows into
 * objects nor serialises them again. The text is kept as its parts, in order: a large answer is copied from them
 * once, into the bytes sent, never first joined into one more large string (docs/performance.md, memory).
 */
export class JsonText<T = unknown> {
  /** The shape the text holds, for readers of a handler's signature (never set). */
  declare readonly shape?: T;

  /** The text, in order; none once released. */
  parts: readonly string[];

  /** Called once the answer has been sent or its connection closed (see `whenSent`). */
  sent?: () => void;
  /** A paged list's counts, for its `Link` header (paging-links.ts). */
  page?: PageCounts;

  constructor(...parts: string[]) {
    this.parts = parts;
  }

  /** Has `done` called once this answer has been sent, or its connection closed before (an answer budget's share). */
  whenSent(done: () => void): this {
    this.sent = done;
    return this;
  }

  /**
   * Lets go of the parts once they have been copied into the bytes sent, or once the answer is not sent (a 304, an
   * If-Match check). This object may still be reached afterwards, by promises of the request promoted to V8's old
   * generation while the request waited (for the pool, the answer budget, PostgreSQL), and V8's young-generation
   * collection keeps alive whatever such an object points at, reachable or not: a large text's strings would be
   * promoted to the large-object space and freed only by a full collection (docs/performance.md, "Peak memory
   * under the large read").
   */
  release(): void {
    this.parts = [];
  }
}

/**
 * A paged list as JSON text (`{"<items>":[…],"page":…,"per_page":…,"total":…}`): the items are comma-joined JSON
 * texts built by PostgreSQL, in the page's order; the counts are integers, also kept for the `Link` header.
 */
export function pageJsonText<T>(
  items: string,
  itemsJson: string,
  paging: Paging,
  total: number,
): JsonText<T> {
  const text = new JsonText<T>(
    `{"${items}":[`,
    itemsJson,
    `],"page":${paging.page},"per_page":${paging.perPage},"total":${total}}`,
  );
  text.page = { page: paging.page, per_page: paging.perPage, total };
  return text;
}
