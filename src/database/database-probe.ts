import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import pg from 'pg';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { boundedClient } from './bounded-client.js';

/** The probe's pool: one connection is enough; a second covers a probe that overlaps one still ending. */
const PROBE_POOL_SIZE = 2;
/** The probe's connections stay open between probes (every few seconds), so a ping costs one round trip. */
const PROBE_IDLE_MS = 60_000;

/**
 * The readiness ping: one `SELECT 1` through a small pool of its own, apart from the request pool. Under a load
 * that takes every pooled connection, a ping queued behind requests would fail and turn every replica unready at
 * once, although the database answers; the probe asks the database itself instead.
 */
@Injectable()
export class DatabaseProbe implements OnModuleDestroy {
  private readonly pool: pg.Pool;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.pool = new pg.Pool({
      connectionString: config.databaseUrl,
      max: PROBE_POOL_SIZE,
      idleTimeoutMillis: PROBE_IDLE_MS,
      // The ping's own timeout races every step; these keep what it leaves behind from lasting longer.
      connectionTimeoutMillis: config.dbConnectTimeoutMs,
      statement_timeout: config.dbStatementTimeoutMs,
      Client: boundedClient(config.dbQueryTimeoutMs),
      application_name: 'module-admin-service readiness',
    });
    // An idle connection the server closed (a restart) is dropped by the pool; the error needs a listener.
    this.pool.on('error', () => undefined);
  }

  /**
   * Whether `SELECT 1` answered within `timeoutMs`. A ping that answers late still returns its connection to
   * the probe's pool, warm for the next probe: on a busy machine, dropping it would make every later probe
   * open a connection of its own, slower still. One that never answers is dropped by the bounds of the pool
   * (DB_CONNECT_TIMEOUT_MS, DB_QUERY_TIMEOUT_MS); meanwhile later probes wait for the pool and answer down.
   */
  async ping(timeoutMs: number): Promise<boolean> {
    const answered = this.pool.connect().then(
      (client) =>
        client.query('SELECT 1').then(
          () => {
            client.release();
            return true;
          },
          (error: Error) => {
            client.release(error);
            return false;
          },
        ),
      () => false,
    );
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const up = await Promise.race([answered, timedOut]);
    clearTimeout(timer);
    return up;
  }

  async onModuleDestroy(): Promise<void> {
    await this.pool.end();
  }
}
