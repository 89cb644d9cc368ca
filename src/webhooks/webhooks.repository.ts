import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { type Paging } from '../core/query.js';
import { pageWithTotal, type PageRow, SqlParams, splitPage } from '../database/sql.js';

export interface WebhookRow {
  id: number;
  url: string;
  types: string[];
  description: string | null;
  enabled: boolean;
  secret: string;
  created_at: Date;
  updated_at: Date;
  failing_since: Date | null;
}

interface NewWebhook {
  url: string;
  types: readonly string[];
  description: string | null;
  secret: string;
}

export interface WebhookChanges {
  url?: string;
  types?: readonly string[];
  description?: string | null;
  enabled?: boolean;
}

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

const COLUMNS =
  'w.id, w.url, w.types, w.description, w.enabled, w.secret, w.created_at, w.updated_at, w.failing_since';
const RETURNING = COLUMNS.replaceAll('w.', '');
const DELIVERY_COLUMNS =
  'd.id, d.event_id, d.event_type, d.attempt, d.at, d.outcome, d.status_code, d.error, d.duration_ms, ' +
  'd.response_excerpt, d.next_retry_at';

/** The only code that reads or writes `webhooks` and `webhook_deliveries`. */
@Injectable()
export class WebhooksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(webhook: NewWebhook, manager: EntityManager): Promise<WebhookRow> {
    const [row] = await manager.query<WebhookRow[]>(
      `INSERT INTO webhooks (url, types, description, secret) VALUES ($1, $2::varchar[], $3, $4)
       RETURNING ${RETURNING}`,
      [webhook.url, webhook.types, webhook.description, webhook.secret],
    );
    return row;
  }

  async findById(id: string, manager: EntityManager = this.dataSource.manager): Promise<WebhookRow | null> {
    const [row] = await manager.query<WebhookRow[]>(`SELECT ${COLUMNS} FROM webhooks w WHERE w.id = $1`, [
      id,
    ]);
    return row ?? null;
  }

  async findByIds(ids: readonly string[]): Promise<WebhookRow[]> {
    return this.dataSource.query<WebhookRow[]>(
      `SELECT ${COLUMNS} FROM webhooks w WHERE w.id = ANY($1::bigint[])`,
      [ids],
    );
  }

  /** Oldest first (by id). */
  async page(paging: Paging): Promise<{ items: WebhookRow[]; total: number }> {
    const params = new SqlParams();
    const sql = pageWithTotal(params, 'FROM webhooks w', '', COLUMNS, 'w.id ASC', paging);
    return splitPage(await this.dataSource.query<PageRow<WebhookRow>[]>(sql, params.values));
  }

  /** Applies the given fields; turning a webhook on again forgets that it was failing. */
  async update(id: string, changes: WebhookChanges, manager: EntityManager): Promise<WebhookRow | null> {
    const params = new SqlParams();
    const sets = ['updated_at = now()'];
    if (changes.url !== undefined) sets.push(`url = ${params.add(changes.url)}`);
    if (changes.types !== undefined) sets.push(`types = ${params.add(changes.types)}::varchar[]`);
    if (changes.description !== undefined) sets.push(`description = ${params.add(changes.description)}`);
    if (changes.enabled !== undefined) {
      sets.push(`enabled = ${params.add(changes.enabled)}`);
      if (changes.enabled) sets.push('failing_since = NULL');
    }
    // TypeORM answers an UPDATE with [rows, count].
    const [rows] = await manager.query<[WebhookRow[], number]>(
      `UPDATE webhooks SET ${sets.join(', ')} WHERE id = ${params.add(id)} RETURNING ${RETURNING}`,
      params.values,
    );
    return rows[0] ?? null;
  }

  /** Deletes the webhook and its delivery log (by foreign key); the deleted row, or null. */
  async delete(id: string, manager: EntityManager): Promise<WebhookRow | null> {
    const [rows] = await manager.query<[WebhookRow[], number]>(
      `DELETE FROM webhooks WHERE id = $1 RETURNING ${RETURNING}`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** The enabled webhooks and the types each takes, for the dispatcher. */
  enabledSubscriptions(manager: EntityManager): Promise<{ id: number; types: string[] }[]> {
    return manager.query(`SELECT id, types FROM webhooks WHERE enabled ORDER BY id`);
  }

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

  async markDelivered(webhookId: string, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`,
      [webhookId],
    );
  }

  /** Notes a failure (the streak starts at the first); disables the webhook once the streak is `windowMs` old. */
  async markFailed(webhookId: string, windowMs: number, manager: EntityManager): Promise<WebhookRow | null> {
    await manager.query(`UPDATE webhooks SET failing_since = COALESCE(failing_since, now()) WHERE id = $1`, [
      webhookId,
    ]);
    const [disabled] = await manager.query<[WebhookRow[], number]>(
      `UPDATE webhooks SET enabled = false, updated_at = now()
       WHERE id = $1 AND enabled AND failing_since <= now() - $2 * interval '1 millisecond'
       RETURNING ${RETURNING}`,
      [webhookId, windowMs],
    );
    return disabled[0] ?? null;
  }

  /**
   * The dispatcher's position, row-locked for `manager`'s transaction; undefined when another replica holds the
   * lock (it is dispatching now), null before the first event was dispatched.
   */
  async lockDispatchPosition(
    manager: EntityManager,
  ): Promise<{ txid: string; id: string } | null | undefined> {
    const [row] = await manager.query<{ txid: string | null; id: string | null }[]>(
      `SELECT last_txid::text AS txid, last_event_id::text AS id FROM webhook_dispatch FOR UPDATE SKIP LOCKED`,
    );
    if (row === undefined) return undefined;
    return row.txid === null || row.id === null ? null : { txid: row.txid, id: row.id };
  }

  async saveDispatchPosition(position: { txid: string; id: string }, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE webhook_dispatch SET last_txid = $1::bigint, last_event_id = $2::bigint, updated_at = now()`,
      [position.txid, position.id],
    );
  }

  async pruneDeliveriesBefore(cutoff: Date): Promise<number> {
    const [, deleted] = await this.dataSource.query<[unknown[], number]>(
      `DELETE FROM webhook_deliveries WHERE at < $1`,
      [cutoff],
    );
    return deleted;
  }
}
