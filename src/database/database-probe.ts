import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { discardConnection } from './bounded-client.js';

/** The readiness ping: one `SELECT 1` through the pool, bounded by the probe's own timeout. */
@Injectable()
export class DatabaseProbe {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Whether `SELECT 1` answered within `timeoutMs`. A ping without an answer discards its connection: probes
   * repeated against a frozen database must not each hold a pooled connection until DB_QUERY_TIMEOUT_MS.
   */
  async ping(timeoutMs: number): Promise<boolean> {
    const runner = this.dataSource.createQueryRunner();
    const answered = runner.query('SELECT 1').then(
      () => true,
      () => false,
    );
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const up = await Promise.race([answered, timedOut]);
    clearTimeout(timer);
    if (!up) {
      // connect() settles with the connection the ping used, or fails when it never got one.
      void runner.connect().then(
        (client) => discardConnection(client as pg.PoolClient),
        () => undefined,
      );
    }
    void answered.then(() => runner.release());
    return up;
  }
}
