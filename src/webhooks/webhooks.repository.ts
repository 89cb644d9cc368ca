import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { type Paging } from '../core/query.js';
import { preparedQuery } from '../database/prepared.js';
import { type PerField } from '../core/wire-shape.js';
import { pageWithTotal, type PageRow, SqlParams, splitPage } from '../database/sql.js';
import { ALL_TYPES } from './webhook-types.js';

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

/** What `skipUnwantedEvents` found and did. */
export interface DispatchSkip {
  /** Another replica moved the position while this one read it: it is dispatching. */
  busy: boolean;
  /** Events the position moved past (none when `wanted`). */
  skipped: number;
  /** An enabled webhook takes one of the next events: the full round must enqueue their jobs. */
  wanted: boolean;
  /** When the last of the events looked at was written; null when there were none. */
  lastAt: Date | null;
  /** Events after the position are not safe to serve yet (an older transaction is still running). */
  pending: boolean;
}

interface DispatchSkipRow {
  events: number;
  wanted: boolean;
  last_at: Date | null;
  pending: boolean;
  moved: number;
}

/** The column of each property of a `WebhookRow`. */
const WEBHOOK_COLUMNS = {
  id: 'w.id',
  url: 'w.url',
  types: 'w.types',
  description: 'w.description',
  enabled: 'w.enabled',
  secret: 'w.secret',
  created_at: 'w.created_at',
  updated_at: 'w.updated_at',
  failing_since: 'w.failing_since',
} satisfies PerField<WebhookRow, string>;

const COLUMNS = Object.values(WEBHOOK_COLUMNS).join(', ');

const WEBHOOK_KEYS = Object.keys(WEBHOOK_COLUMNS) as (keyof WebhookRow)[];

/**
 * A delivery job's webhook, read by the statement that takes the job (DeliveryQueue): the columns of a
 * `WebhookRow`, each as `webhook_<property>`, of `webhooks w` joined by {@link jobWebhookJoin}.
 */
export const JOB_WEBHOOK_COLUMNS = WEBHOOK_KEYS.map(
  (key) => `${WEBHOOK_COLUMNS[key]} AS webhook_${key}`,
).join(', ');

/** The join of `webhooks w` to the jobs `jobs` (rows with the job's `data`); no row when it was deleted. */
export const jobWebhookJoin = (jobs: string) =>
  `LEFT JOIN webhooks w ON w.id = (${jobs}.data->>'webhookId')::bigint`;

export type JobWebhookRow = { [K in keyof WebhookRow as `webhook_${K}`]: WebhookRow[K] | null };

/** The `WebhookRow` of a row with {@link JOB_WEBHOOK_COLUMNS}; null when the webhook was deleted. */
export function webhookOfJob(row: JobWebhookRow): WebhookRow | null {
  if (row.webhook_id === null) return null;
  return Object.fromEntries(WEBHOOK_KEYS.map((key) => [key, row[`webhook_${key}`]])) as unknown as WebhookRow;
}

const RETURNING = COLUMNS.replaceAll('w.', '');

/**
 * The only code that reads or writes `webhooks` (but the delivery log's statement that ends failure streaks,
 * WebhookDeliveriesRepository) and `webhook_dispatch`, the dispatcher's position.
 */
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

  /** The webhook, row-locked for `manager`'s transaction (a write's If-Match compares it), or null. */
  async lockById(id: string, manager: EntityManager): Promise<WebhookRow | null> {
    const [row] = await manager.query<WebhookRow[]>(
      `SELECT ${COLUMNS} FROM webhooks w WHERE w.id = $1 FOR UPDATE`,
      [id],
    );
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

  /**
   * The dispatcher's round when no enabled webhook takes any of the next `limit` events that are safe to serve
   * (the feed's rule, docs/events.md): it moves the position past them in one statement of its own, planned
   * once per connection (a named prepared statement), without reading the events' data. When a webhook takes
   * one of them, nothing moves and `wanted` says so: the caller then runs the full round, which enqueues the
   * jobs in the transaction that moves the position. The position moves only if it is still the one this
   * statement read (another replica's round moved it, or holds it, otherwise): no row lock is taken before
   * the update, so the statement has a transaction id only for its last moment, and holds no other writer's
   * event back from the feed meanwhile. It reads `change_events`, whose only writer is ChangeEventsRepository.
   */
  async skipUnwantedEvents(limit: number): Promise<DispatchSkip> {
    const [row] = await preparedQuery<DispatchSkipRow>(
      this.dataSource,
      `WITH d AS MATERIALIZED (
         -- Before the first round, from the start (ids and transaction ids are positive).
         SELECT d.last_txid, d.last_event_id,
                coalesce(d.last_txid, 0) AS after_txid, coalesce(d.last_event_id, 0) AS after_id,
                -- The server's oldest running transaction, from the statement's snapshot (no catalog read).
                pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS server_xmin
         FROM webhook_dispatch d
       ),
       p AS MATERIALIZED (
         -- The feed's horizon: this database's transactions only (docs/events.md). It lists the server's
         -- backends (and is planned at each call), so it is asked only when an event lies at or past the
         -- server's oldest running transaction (the newest event, by the index); otherwise that one serves the
         -- same events, as in the feed's reads.
         SELECT d.*,
                CASE
                  WHEN (SELECT max(e.txid) FROM change_events e) >= d.server_xmin THEN change_event_horizon()
                  ELSE d.server_xmin
                END AS xmin
         FROM d
       ),
       -- The position and the horizon as scalar subqueries: the comparisons with them are then index
       -- conditions, whatever the planner guesses of the never-analysed singleton table.
       batch AS MATERIALIZED (
         SELECT e.txid, e.id, e.type, e.at
         FROM change_events e
         WHERE e.txid < (SELECT xmin FROM p)
           AND (e.txid, e.id) > ((SELECT after_txid FROM p), (SELECT after_id FROM p))
         ORDER BY e.txid, e.id
         LIMIT $1
       ),
       wanted AS MATERIALIZED (
         SELECT EXISTS (
           SELECT 1 FROM batch b
           JOIN webhooks w ON w.enabled AND ('${ALL_TYPES}' = ANY (w.types) OR b.type = ANY (w.types))
         ) AS any
       ),
       last AS (SELECT txid, id, at FROM batch ORDER BY txid DESC, id DESC LIMIT 1),
       moved AS (
         UPDATE webhook_dispatch d SET last_txid = last.txid, last_event_id = last.id, updated_at = now()
         FROM p, last, wanted
         -- Only if the position is still the one read: when another replica moved it meanwhile, nothing moves.
         WHERE NOT wanted.any
           AND d.last_txid IS NOT DISTINCT FROM p.last_txid AND d.last_event_id IS NOT DISTINCT FROM p.last_event_id
         RETURNING 1
       )
       SELECT (SELECT count(*)::int FROM batch) AS events,
              wanted.any AS wanted,
              (SELECT at FROM last) AS last_at,
              -- Any event at or past the horizon is after the position, which was below an earlier horizon.
              coalesce((SELECT max(e.txid) FROM change_events e) >= (SELECT xmin FROM p), false) AS pending,
              (SELECT count(*)::int FROM moved) AS moved
       FROM wanted`,
      [limit],
    );
    const skipped = row.moved > 0 ? row.events : 0;
    return {
      busy: !row.wanted && row.events > 0 && skipped === 0,
      skipped,
      wanted: row.wanted,
      lastAt: row.last_at,
      pending: row.pending,
    };
  }

  async saveDispatchPosition(position: { txid: string; id: string }, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE webhook_dispatch SET last_txid = $1::bigint, last_event_id = $2::bigint, updated_at = now()`,
      [position.txid, position.id],
    );
  }
}
