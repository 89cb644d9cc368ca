import { type Readable } from 'node:stream';
import type pg from 'pg';
import QueryStream from 'pg-query-stream';
import { type DataSource, type EntityManager } from 'typeorm';
import { type AppConfig } from '../config/app-config.js';
import { discardConnection, overrideQueryBound } from './bounded-client.js';

/** Rows fetched per round trip while streaming. */
const BATCH_SIZE = 500;

/** How long a streamed query may take, as a whole and between two reads of its consumer. */
interface StreamBounds {
  /** The statement timeout while it runs (each fetch of a batch is one statement for PostgreSQL). */
  statementMs: number;
  /** From the first row to the last: DB_LONG_QUERY_TIMEOUT_MS. */
  wholeMs: number;
  /** Rows waiting without a read by the consumer (a client that stopped reading). */
  idleMs: number;
}

/** Exports run under the long bound (DB_LONG_*), and are cut after EXPORT_IDLE_TIMEOUT_MS without progress. */
export function exportBounds(config: AppConfig): StreamBounds {
  return {
    statementMs: config.dbLongStatementTimeoutMs,
    wholeMs: config.dbLongQueryTimeoutMs,
    idleMs: config.exportIdleTimeoutMs,
  };
}

/** A stream cut by a bound of {@link StreamBounds}. */
class StreamTimedOut extends Error {
  constructor(what: string, ms: number) {
    super(`The streamed query ${what} ${ms} ms; it was cut and its connection closed`);
    this.name = 'StreamTimedOut';
  }
}

/** pg-query-stream, with hooks on each read of its consumer, each row handed over, and its destruction. */
class WatchedQueryStream extends QueryStream {
  onRead: () => void = () => undefined;
  onPush: () => void = () => undefined;
  onCut: () => void = () => undefined;

  override _read(size: number): void {
    this.onRead();
    super._read(size);
  }

  override push(chunk: unknown): boolean {
    const more = super.push(chunk);
    if (chunk !== null) this.onPush();
    return more;
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.readableEnded) {
      super._destroy(error as Error, callback);
      return;
    }
    // Cut before its end: closing the cursor would wait for the server's answer, which a frozen server never
    // gives, so the connection is dropped instead (see discardConnection) and the pool opens a fresh one.
    this.onCut();
    callback(error);
  }
}

/**
 * Cuts `rows` when its consumer leaves rows unread for `idleMs`; the interval to clear when the stream ends.
 * Counts only while rows wait for the consumer: from a row handed over until the consumer's next read. The
 * database's own time (a read waiting for the next batch) is bounded by the statement timeout instead.
 */
function watchIdle(rows: WatchedQueryStream, idleMs: number): NodeJS.Timeout {
  let readPending = true;
  let lastPushAt = Date.now();
  rows.onRead = () => (readPending = true);
  rows.onPush = () => {
    readPending = false;
    lastPushAt = Date.now();
  };
  return setInterval(
    () => {
      if (!readPending && Date.now() - lastPushAt >= idleMs) {
        rows.destroy(new StreamTimedOut('had no reader for', idleMs));
      }
    },
    Math.max(Math.floor(idleMs / 4), 25),
  );
}

/**
 * Runs `sql` on a pooled connection of its own and streams its rows through a server-side cursor
 * (pg-query-stream), `BATCH_SIZE` at a time as the reader asks for them, within `bounds`: past one, the stream
 * fails with {@link StreamTimedOut} (a response in progress is cut) and the connection is dropped. The
 * connection goes back to the pool when the stream ends, dropped when it fails or is destroyed first. Awaiting
 * this acquires the connection, so a database that is down fails here, before a response has started.
 */
export async function streamRows(
  dataSource: DataSource,
  sql: string,
  params: unknown[],
  bounds: StreamBounds,
): Promise<Readable> {
  const runner = dataSource.createQueryRunner('slave');
  const client = (await runner.connect()) as pg.PoolClient;
  try {
    // Session-wide, as the cursor's fetches are statements of their own; reset before the connection returns.
    await client.query(`SELECT set_config('statement_timeout', $1, false)`, [String(bounds.statementMs)]);
  } catch (error) {
    discardConnection(client);
    await runner.release();
    throw error;
  }
  const rows = client.query(new WatchedQueryStream(sql, params, { batchSize: BATCH_SIZE }));
  const whole = setTimeout(
    () => rows.destroy(new StreamTimedOut('ran longer than', bounds.wholeMs)),
    bounds.wholeMs,
  );
  const idle = watchIdle(rows, bounds.idleMs);
  let released = false;
  const release = (drop: boolean) => {
    if (released) return;
    released = true;
    clearTimeout(whole);
    clearInterval(idle);
    if (drop) {
      discardConnection(client);
      void runner.release();
      return;
    }
    client.query('RESET statement_timeout').then(
      () => runner.release(),
      () => {
        discardConnection(client);
        return runner.release();
      },
    );
  };
  rows.onCut = () => release(true);
  rows.once('end', () => release(false));
  // Whatever else closes it (a statement error after which the cursor was closed): never reused.
  rows.once('close', () => release(!rows.readableEnded));
  return rows;
}

/**
 * A read of several statements that must agree with each other (the files of one export): one pooled connection
 * in a REPEATABLE READ transaction, so every statement sees the same data and the same `now()`. Its statements
 * run one after another; `stream` ones through a cursor, as {@link streamRows} does, under the same bounds.
 */
export interface Snapshot {
  /** The transaction, for repository statements (counts, and writes that commit with it). */
  readonly manager: EntityManager;
  /** The rows of `sql`, streamed from a cursor; cut by the idle bound as {@link streamRows}. */
  stream(sql: string, params: unknown[]): Readable;
  /** Commits and gives the connection back. */
  commit(): Promise<void>;
  /** Rolls back (or, while a cursor is still open, drops the connection) and gives it back; idempotent. */
  abort(): void;
}

/** Opens a {@link Snapshot}; awaiting it acquires the connection, so a database that is down fails here. */
export async function openSnapshot(dataSource: DataSource, bounds: StreamBounds): Promise<Snapshot> {
  const runner = dataSource.createQueryRunner('master');
  const client = (await runner.connect()) as pg.PoolClient;
  overrideQueryBound(client, bounds.wholeMs);
  let open: WatchedQueryStream | undefined;
  let done = false;
  const release = (drop: boolean) => {
    if (done) return;
    done = true;
    clearTimeout(whole);
    overrideQueryBound(client, undefined);
    if (drop) discardConnection(client);
    void runner.release();
  };
  const whole = setTimeout(() => {
    open?.destroy(new StreamTimedOut('ran longer than', bounds.wholeMs));
    release(true);
  }, bounds.wholeMs);
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await client.query(`SELECT set_config('statement_timeout', $1, true)`, [String(bounds.statementMs)]);
  } catch (error) {
    release(true);
    throw error;
  }
  return {
    manager: runner.manager,
    stream(sql, params) {
      const rows = client.query(new WatchedQueryStream(sql, params, { batchSize: BATCH_SIZE }));
      open = rows;
      const idle = watchIdle(rows, bounds.idleMs);
      rows.onCut = () => release(true);
      rows.once('close', () => {
        clearInterval(idle);
        if (open === rows) open = undefined;
        if (!rows.readableEnded) release(true);
      });
      return rows;
    },
    async commit() {
      if (done) throw new Error('The snapshot was closed before its commit');
      try {
        await client.query('COMMIT');
      } catch (error) {
        release(true);
        throw error;
      }
      release(false);
    },
    abort() {
      if (done) return;
      if (open !== undefined) {
        release(true);
        return;
      }
      client.query('ROLLBACK').then(
        () => release(false),
        () => release(true),
      );
    },
  };
}
