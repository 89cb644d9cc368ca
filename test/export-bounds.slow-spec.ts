import net from 'node:net';
import pg from 'pg';
import { type DataSource } from 'typeorm';
import { testDatabaseUrl, useTestApp } from './support/app.js';
import { freshAdmin } from './support/fresh-admin.js';
import { csvLines } from './support/csv.js';
import { poolOf } from './support/pool.js';
import { waitFor } from './support/wait-for.js';

/** The request pool's connections: all of them, and those idle (TypeORM's pg-pool underneath). */
function poolState(dataSource: DataSource): { total: number; idle: number } {
  const pool = poolOf(dataSource);
  return { total: pool.totalCount, idle: pool.idleCount };
}

/**
 * A download whose client stops reading as soon as the answer's head has arrived, as a stalled browser or a
 * script that hangs: resolves with the socket (paused) and what had arrived.
 */
function stalledDownload(
  url: string,
  path: string,
  token: string,
): Promise<{ socket: net.Socket; head: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let received = '';
    socket.setEncoding('latin1');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (received.includes('\r\n\r\n')) {
        socket.pause();
        socket.removeAllListeners('data');
        resolve({ socket, head: received });
      }
    });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  });
}

/** Reads what is left of a paused download, to its end. */
function rest(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => resolve(text));
    socket.on('error', () => undefined);
    socket.resume();
  });
}

describe('CSV export bounds', () => {
  const POOL = 2;
  const { app, api } = useTestApp({
    dbPoolSize: POOL,
    dbConnectTimeoutMs: 1000,
    dbStatementTimeoutMs: 1000,
    dbQueryTimeoutMs: 2000,
    exportIdleTimeoutMs: 2000,
  });
  let token: string;

  beforeAll(async () => {
    await app.reset();
    ({ token } = await freshAdmin(app, { username: 'root' }));
    // About 20 MB of CSV: far more than the socket buffers between a stalled client and the service hold.
    // Through a connection of the test's own: the service's statement timeout is short here.
    const db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    try {
      await db.query(
        `INSERT INTO users (username, email, password_hash)
         SELECT 'export-bounds-user-with-a-long-name-' || n, 'export-bounds-' || n || '@example.edu', 'x'
         FROM generate_series(1, 200000) AS n`,
      );
    } finally {
      await db.end();
    }
  });

  it('cuts downloads whose client stopped reading, so they do not exhaust the pool', async () => {
    const stalled = await Promise.all(
      Array.from({ length: POOL }, () => stalledDownload(app.url, '/api/users/export.csv', token)),
    );
    for (const { head } of stalled) expect(head).toMatch(/^HTTP\/1\.1 200 /);
    // While they stall, each holds a pooled connection: the pool is taken whole.
    expect(poolState(app.dataSource).idle).toBe(0);
    const started = Date.now();
    // After EXPORT_IDLE_TIMEOUT_MS without a read, every connection is back (or dropped, to be opened anew).
    await waitFor(() => poolState(app.dataSource).idle === poolState(app.dataSource).total, {
      timeoutMs: 10_000,
      what: 'the pool to be free',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(await api.get('/api/modules?per_page=1', { token })).toMatchObject({ status: 200 });
    // The stalled downloads were cut: a chunked answer without its last chunk, never a complete file.
    for (const { socket } of stalled) expect(await rest(socket)).not.toMatch(/\r\n0\r\n\r\n$/);
  });

  it('runs an export under the long statement timeout, so it is not cut after its 200', async () => {
    // Warms the cache of the caller's account, which the lock below would block.
    expect(await api.get('/api/modules?per_page=1', { token })).toMatchObject({ status: 200 });
    const locker = new pg.Client({ connectionString: testDatabaseUrl() });
    // Apart from the locker: pg_stat_activity is read once per transaction.
    const watcher = new pg.Client({ connectionString: testDatabaseUrl() });
    await locker.connect();
    await watcher.connect();
    try {
      // The export's query waits on this lock past the interactive statement timeout (1 s).
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      // Eleven users (…-19999 and …-199990 to …-199999): the query scans the table, the answer stays small.
      const download = fetch(`${app.url}/api/users/export.csv?query=long-name-19999`, {
        headers: { authorization: `Bearer ${token}` },
      });
      // The export's query waits on the lock, and keeps waiting past the interactive statement timeout (1 s):
      // the long timeout governs it.
      await waitFor(
        async () =>
          (
            await watcher.query(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'SELECT u.id, u.username%'
                 AND clock_timestamp() - query_start > interval '1500 milliseconds'`,
            )
          ).rowCount === 1,
        { timeoutMs: 10_000, what: 'the export to wait on the lock for more than 1.5 s' },
      );
      await locker.query('COMMIT');
      const res = await download;
      expect(res.status).toBe(200);
      const lines = csvLines(await res.text());
      expect(lines).toHaveLength(1 + 11);
    } finally {
      await locker.end();
      await watcher.end();
    }
  });
});
