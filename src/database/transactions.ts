import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { overrideQueryBound } from './bounded-client.js';
import { SqlParams } from './sql.js';

/**
 * A database transaction in progress, as services see it: something to hand to repository methods so their
 * statements join it. Services never call it themselves.
 */
export type Transaction = EntityManager;

/**
 * Rows a repository leaves for the end of the transaction (the audit trail, the change events): every item of
 * one kind is written by one data-modifying statement, and the statements of every kind are sent together as
 * one, just before the commit. A change's records then cost the change one round trip between them, not one
 * each, and no row lock the change took is held longer for them (docs/performance.md, "Module writes").
 */
export interface DeferredRows<T> {
  /** A data-modifying statement (an INSERT) writing `items` in their order, its values added to `params`. */
  statement(items: readonly T[], params: SqlParams): string;
  /** An expression evaluated once by the combined statement after its writes (a `pg_notify`), if any. */
  select?: string;
}

/** Per transaction opened by Transactions: the items left so far, by kind, kinds in the order first used. */
const deferred = new WeakMap<EntityManager, Map<DeferredRows<unknown>, unknown[]>>();

/**
 * Writes `item` with `kind` in `transaction`: at its end when {@link Transactions} opened it, with every other
 * row left there; otherwise (a manager of its own, a transaction opened elsewhere) at once, by the same statement.
 */
export async function writeRows<T>(
  transaction: EntityManager,
  kind: DeferredRows<T>,
  item: T,
): Promise<void> {
  const kinds = deferred.get(transaction);
  if (kinds === undefined) return writeDeferred(transaction, new Map([[kind, [item]]]));
  const items = kinds.get(kind);
  if (items) items.push(item);
  else kinds.set(kind, [item]);
}

/** Every kind's INSERT as one statement (data-modifying CTEs), then each kind's SELECT expression. */
async function writeDeferred<T>(manager: EntityManager, kinds: Map<DeferredRows<T>, T[]>): Promise<void> {
  const params = new SqlParams();
  const writes = [...kinds].map(([kind, items], i) => `w${i} AS (${kind.statement(items, params)})`);
  const selects = [...kinds.keys()].flatMap((kind) => (kind.select ? [kind.select] : []));
  await manager.query(
    `WITH ${writes.join(',\n')}\nSELECT ${selects.length > 0 ? selects.join(', ') : '1'}`,
    params.values,
  );
}

/** Runs `work` with deferral on, then writes what it deferred in one statement (before the caller commits). */
async function withDeferredRows<T>(
  manager: EntityManager,
  work: (transaction: Transaction) => Promise<T>,
): Promise<T> {
  const kinds = new Map<DeferredRows<unknown>, unknown[]>();
  deferred.set(manager, kinds);
  try {
    const result = await work(manager);
    if (kinds.size > 0) await writeDeferred(manager, kinds);
    return result;
  } finally {
    deferred.delete(manager);
  }
}

/**
 * Opens transactions for services whose transaction boundary interleaves with rules: `run(work)` commits when
 * `work` resolves and rolls back when it throws. Services pass the transaction on to repositories. Rows left
 * with {@link writeRows} are written after `work` resolves, before the commit.
 */
@Injectable()
export class Transactions {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A transaction of an interactive request: the pool's bounds (DB_STATEMENT_TIMEOUT_MS, DB_QUERY_TIMEOUT_MS). */
  run<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => withDeferredRows(manager, work));
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
      const result = await withDeferredRows(runner.manager, work);
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
