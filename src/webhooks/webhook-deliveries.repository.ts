import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { type Paging } from '../core/query.js';
import { preparedQuery } from '../database/prepared.js';
import { pageWithTotal, type PageRow, SqlParams, splitPage } from '../database/sql.js';
import { DELIVERY_FIELDS } from './delivery.shape.js';

export interface DeliveryRow {
  id: number;
  event_id: string;
  event_type: string;
  attempt: number;
  at: Date;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
  next_retry_at: Date | null;
}

type NewDelivery = Omit<DeliveryRow, 'id'> & { webhook_id: string };

/** The columns of a `DeliveryRow`: the delivery's wire fields (delivery.shape.ts), each from its column. */
const DELIVERY_COLUMNS = DELIVERY_FIELDS.map((field) => `d.${field}`).join(', ');

/**
 * The delivery log, `webhook_deliveries`: its pages, the attempts recorded (a group's delivered attempts end
 * their webhooks' failure streaks in the same statement), the retention prune.
 */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}
  /** The newest attempts first. */
  async deliveries(webhookId: string, paging: Paging): Promise<{ items: DeliveryRow[]; total: number }> {
    const params = new SqlParams();
    const where = `WHERE d.webhook_id = ${params.add(webhookId)}`;
    const sql = pageWithTotal(
      params,
      'FROM webhook_deliveries d',
      where,
      DELIVERY_COLUMNS,
      'd.at DESC, d.id DESC',
      paging,
    );
    return splitPage(await this.dataSource.query<PageRow<DeliveryRow>[]>(sql, params.values));
  }

  /**
   * Delivered attempts of a group in one statement: their rows (an attempt recorded already is left as it is),
   * and the failure streak ended for every webhook one of them newly delivered to. Returns the index (in
   * `deliveries`) of each attempt recorded now; the others were recorded before. `alsoRun` adds one more
   * data-modifying CTE to the statement (the completion of the attempts' jobs), its value the parameter it
   * names. The statement runs on its own (one statement is one transaction), as a named prepared statement.
   */
  async recordDelivered(
    deliveries: readonly NewDelivery[],
    alsoRun?: { cte: (param: string) => string; value: unknown },
  ): Promise<Set<number>> {
    const sql = `WITH given AS (
         SELECT * FROM unnest($1::bigint[], $2::varchar[], $3::varchar[], $4::int[], $5::timestamptz[],
                              $6::int[], $7::int[], $8::varchar[])
                WITH ORDINALITY AS g(webhook_id, event_id, event_type, attempt, at, status_code, duration_ms,
                                     response_excerpt, n)
       ),
       recorded AS (
         INSERT INTO webhook_deliveries
           (webhook_id, event_id, event_type, attempt, at, outcome, status_code, error, duration_ms,
            response_excerpt, next_retry_at)
         SELECT webhook_id, event_id, event_type, attempt, at, 'delivered', status_code, NULL, duration_ms,
                response_excerpt, NULL
         FROM given ORDER BY n
         ON CONFLICT (webhook_id, event_id, attempt) DO NOTHING
         RETURNING webhook_id, event_id, attempt
       ),
       cleared AS (
         UPDATE webhooks SET failing_since = NULL
         WHERE id IN (SELECT webhook_id FROM recorded) AND failing_since IS NOT NULL
       )${
         alsoRun
           ? `,
       also AS (${alsoRun.cte('$9')})`
           : ''
       }
       -- The same attempt twice in a group: the first is the one recorded now.
       SELECT DISTINCT ON (r.webhook_id, r.event_id, r.attempt) g.n::int - 1 AS n
       FROM recorded r
       JOIN given g ON (g.webhook_id, g.event_id, g.attempt) = (r.webhook_id, r.event_id, r.attempt)
       ORDER BY r.webhook_id, r.event_id, r.attempt, g.n`;
    const params = [
      deliveries.map((d) => d.webhook_id),
      deliveries.map((d) => d.event_id),
      deliveries.map((d) => d.event_type),
      deliveries.map((d) => d.attempt),
      deliveries.map((d) => d.at),
      deliveries.map((d) => d.status_code),
      deliveries.map((d) => d.duration_ms),
      deliveries.map((d) => d.response_excerpt),
      ...(alsoRun ? [alsoRun.value] : []),
    ];
    const rows = await preparedQuery<{ n: number }>(this.dataSource, sql, params);
    return new Set(rows.map((row) => row.n));
  }

  /**
   * Records one attempt; false when that attempt of that event was recorded already (a job run again after
   * its replica died between recording and completing it).
   */
  async recordAttempt(delivery: NewDelivery, manager: EntityManager): Promise<boolean> {
    const rows = await manager.query<unknown[]>(
      `INSERT INTO webhook_deliveries
         (webhook_id, event_id, event_type, attempt, at, outcome, status_code, error, duration_ms,
          response_excerpt, next_retry_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (webhook_id, event_id, attempt) DO NOTHING
       RETURNING id`,
      [
        delivery.webhook_id,
        delivery.event_id,
        delivery.event_type,
        delivery.attempt,
        delivery.at,
        delivery.outcome,
        delivery.status_code,
        delivery.error,
        delivery.duration_ms,
        delivery.response_excerpt,
        delivery.next_retry_at,
      ],
    );
    return rows.length === 1;
  }

  /**
   * Deletes up to `limit` attempts older than `cutoff` (oldest first, by the `at` index), in `manager`'s
   * transaction; how many it deleted.
   */
  async pruneDeliveriesBefore(cutoff: Date, limit: number, manager: EntityManager): Promise<number> {
    const [, deleted] = await manager.query<[unknown[], number]>(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE at < $1 ORDER BY at LIMIT $2
       )`,
      [cutoff, limit],
    );
    return deleted;
  }

  /** When the webhook's latest recorded attempt started; null when it has none. */
  async lastAttemptAt(webhookId: string): Promise<Date | null> {
    const [row] = await this.dataSource.query<{ at: Date }[]>(
      `SELECT d.at FROM webhook_deliveries d WHERE d.webhook_id = $1 ORDER BY d.at DESC, d.id DESC LIMIT 1`,
      [webhookId],
    );
    return row?.at ?? null;
  }

  /**
   * Runs `work` under a savepoint of `manager`'s transaction: when it throws, its own statements alone are
   * rolled back, and the transaction goes on.
   */
  async underSavepoint<T>(manager: EntityManager, work: () => Promise<T>): Promise<T> {
    await manager.query('SAVEPOINT attempt');
    try {
      const result = await work();
      await manager.query('RELEASE SAVEPOINT attempt');
      return result;
    } catch (error) {
      await manager.query('ROLLBACK TO SAVEPOINT attempt');
      throw error;
    }
  }
}
