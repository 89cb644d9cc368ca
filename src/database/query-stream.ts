import { type Readable } from 'node:stream';
import type pg from 'pg';
import QueryStream from 'pg-query-stream';
import { type DataSource } from 'typeorm';

/** Rows fetched per round trip while streaming. */
const BATCH_SIZE = 500;

/**
 * Runs `sql` on a pooled connection of its own and streams its rows through a server-side cursor
 * (pg-query-stream), `BATCH_SIZE` at a time as the reader asks for them; the connection goes back to the pool
 * when the stream ends, fails or is destroyed. Awaiting this acquires the connection, so a database that is
 * down fails here, before a response has started.
 */
export async function streamRows(dataSource: DataSource, sql: string, params: unknown[]): Promise<Readable> {
  const runner = dataSource.createQueryRunner('slave');
  const client = (await runner.connect()) as pg.PoolClient;
  const rows = client.query(new QueryStream(sql, params, { batchSize: BATCH_SIZE }));
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    void runner.release();
  };
  rows.once('close', release);
  rows.once('end', release);
  rows.once('error', release);
  return rows;
}
