import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { overrideQueryBound } from './bounded-client.js';

/**
 * A database transaction in progress, as services see it: something to hand to repository methods so their
 * statements join it. Services never call it themselves.
 */
export type Transaction = EntityManager;

/**
 * Opens transactions for services whose transaction boundary interleaves with rules: `run(work)` commits when
 * `work` resolves and rolls back when it throws. Services pass the transaction on to repositories.
 */
@Injectable()
export class Transactions {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A transaction of an interactive request: the pool's bounds (DB_STATEMENT_TIMEOUT_MS, DB_QUERY_TIMEOUT_MS). */
  run<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /**
   * A transaction of long-running work (a CSV import, the rollover): the same as {@link run}, but its statements
   * are bounded by DB_LONG_STATEMENT_TIMEOUT_MS (`SET LOCAL statement_timeout`, which ends with the transaction)
   * and DB_LONG_QUERY_TIMEOUT_MS on this side, instead of the interactive bounds. How a route opts in:
   * docs/decisions.md, "Bounds on the database".
   */
  async runLong<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    const client = (await runner.connect()) as pg.PoolClient;
    overrideQueryBound(client, this.config.dbLongQueryTimeoutMs);
    try {
      await runner.startTransaction();
      await runner.query(`SELECT set_config('statement_timeout', $1, true)`, [
        String(this.config.dbLongStatementTimeoutMs),
      ]);
      const result = await work(runner.manager);
      await runner.commitTransaction();
      return result;
    } catch (error) {
      // As TypeORM's own transaction(): the rollback's failure (a lost connection) does not hide the cause.
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    } finally {
      overrideQueryBound(client, undefined);
      await runner.release();
    }
  }
}
