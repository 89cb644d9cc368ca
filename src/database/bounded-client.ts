import pg from 'pg';

/** A query that had no answer within DB_QUERY_TIMEOUT_MS; its connection was closed. */
class QueryTimedOut extends Error {
  constructor(timeoutMs: number) {
    super(`The database did not answer within ${timeoutMs} ms; the connection was closed`);
    this.name = 'QueryTimedOut';
  }
}

/** The node-postgres internals a discarded connection needs: the socket, and the flag pg-pool reads. */
interface ClientInternals {
  _queryable: boolean;
  connection?: { stream?: { destroy(): void } };
}

/**
 * Makes a pooled connection unusable at once: later queries on it fail immediately, the pool drops it when it
 * comes back instead of handing it out again, and its socket is closed (a frozen server then sees the end of
 * the connection when it wakes, and rolls back whatever that connection had open).
 */
export function discardConnection(client: pg.ClientBase): void {
  const internals = client as unknown as ClientInternals;
  internals._queryable = false;
  internals.connection?.stream?.destroy();
}

/** Where a connection keeps a bound that replaces the pool's for a while (long-running work). */
const BOUND_OVERRIDE = Symbol('queryBoundOverride');
type Overridable = { [BOUND_OVERRIDE]?: number };

/**
 * Bounds this connection's queries by `queryTimeoutMs` instead of the pool's bound, until called again with
 * `undefined` (before the connection goes back to the pool). For long-running work: see transactions.ts.
 */
export function overrideQueryBound(client: pg.ClientBase, queryTimeoutMs: number | undefined): void {
  (client as Overridable)[BOUND_OVERRIDE] = queryTimeoutMs;
}

/**
 * A node-postgres client whose queries (every TypeORM query) are bounded on this side as well. PostgreSQL's
 * `statement_timeout` cannot fire while the server is frozen or unreachable (a stopped process, a lost network
 * path): the query would wait forever and hold its pooled connection. Past the bound the query fails with
 * {@link QueryTimedOut} and its connection is discarded, never reused, since it may still answer the old query
 * later. Streamed queries (pg-query-stream, exports) are not bounded here: query-stream.ts bounds them whole.
 */
export function boundedClient(queryTimeoutMs: number): typeof pg.Client {
  class BoundedClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      // A socket error while neither the pool nor a query runner listens must not become an uncaught 'error'.
      this.on('error', () => undefined);
    }
  }
  const query = pg.Client.prototype.query;
  BoundedClient.prototype.query = function (this: pg.Client, ...args: unknown[]): unknown {
    const [config] = args;
    // A submittable (a stream, a cursor) reports its own outcome and is left unbounded.
    if (typeof (config as { submit?: unknown } | undefined)?.submit === 'function') {
      return Reflect.apply(query, this, args);
    }
    let timer: NodeJS.Timeout | undefined;
    const boundMs = (this as Overridable)[BOUND_OVERRIDE] ?? queryTimeoutMs;
    const giveUp = (fail: (error: Error) => void) => {
      timer = setTimeout(() => {
        discardConnection(this);
        fail(new QueryTimedOut(boundMs));
      }, boundMs);
    };
    // The callback form, used by pg-pool's own `pool.query` (prepared statements, prepared.ts).
    const at = args.findIndex((arg) => typeof arg === 'function');
    if (at !== -1) {
      const callback = args[at] as (error: Error | null, result?: unknown) => void;
      let settled = false;
      const once = (error: Error | null, result?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        callback(error, result);
      };
      args[at] = once;
      giveUp((error) => once(error));
      return Reflect.apply(query, this, args);
    }
    const result = Reflect.apply(query, this, args) as Promise<unknown>;
    return new Promise((resolve, reject) => {
      giveUp(reject);
      result.then(
        (value: unknown) => {
          clearTimeout(timer);
          resolve(value);
        },
        // node-postgres rejects with Error instances only.
        (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  } as typeof query;
  return BoundedClient;
}
