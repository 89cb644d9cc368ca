import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  DataSource,
  type EntityManager,
  type EntitySubscriberInterface,
  type QueryRunner,
  type TransactionCommitEvent,
  type TransactionRollbackEvent,
} from 'typeorm';
import { type PerField } from '../core/wire-shape.js';
import { jsonObjectArguments } from '../database/sql.js';
import { type DeferredRows, writeRows } from '../database/transactions.js';
import { type ChangeEventType, type NewChangeEvent } from './change-event-types.js';
import { MEMBER_ROLE_FIELDS, type MemberRole } from './change-event.shape.js';

/** The channel `append` notifies in the writing transaction; PostgreSQL delivers it on commit. */
export const CHANGE_EVENTS_CHANNEL = 'change_events';

/** Wakes the feed's listeners when the writing transaction commits (see `append`). */
export const CHANGE_EVENTS_NOTIFY = `pg_notify('${CHANGE_EVENTS_CHANNEL}', '')`;

/**
 * The events of one or more `append` calls as one INSERT, in their order (the feed orders a transaction's
 * events by id), and the notification of the feed's listeners.
 */
const CHANGE_EVENT_ROWS: DeferredRows<readonly NewChangeEvent[]> = {
  statement: (batches, params) => `INSERT INTO change_events (type, data)
         SELECT e.value->>'type', e.value->'data'
         FROM jsonb_array_elements(${params.add(
           JSON.stringify(batches.flat().map((event) => ({ type: event.type, data: event.data ?? null }))),
         )}::jsonb) WITH ORDINALITY AS e(value, n)
         ORDER BY e.n`,
  select: CHANGE_EVENTS_NOTIFY,
};

/** A copied role row `c` as an `added` entry of `module.members_changed` (change-event.shape.ts). */
const COPIED_MEMBER_JSON = jsonObjectArguments(MEMBER_ROLE_FIELDS, {
  user_id: 'c.user_id',
  role: 'c.role::text',
} satisfies PerField<MemberRole, string>);

/**
 * The body of a data-modifying CTE that writes the change events of a rollover's member copy, in this order:
 * `events` (a jsonb array of `{type, data}`, the new modules' `module.created`), then one
 * `module.members_changed` per module of `copied` (a CTE of the copied role rows: `user_id`, `module_id`,
 * `role`), in module order, its `added` in user order. PostgreSQL builds them from the copied rows, so no
 * role row comes to the service (docs/api.md §13). It returns each event's `type`; the statement that uses it
 * notifies the feed's listeners ({@link CHANGE_EVENTS_NOTIFY}) and reports the counts (`noteAppended`).
 */
export const copiedMembersEventRows = (copied: string, events: string): string => `
         INSERT INTO change_events (type, data)
         SELECT x.type, x.data FROM (
           SELECT 0 AS part, e.n AS n, e.value->>'type' AS type, e.value->'data' AS data
           FROM jsonb_array_elements(${events}::jsonb) WITH ORDINALITY AS e(value, n)
           UNION ALL
           SELECT 1, c.module_id, 'module.members_changed',
                  jsonb_build_object(
                    'module_id', c.module_id,
                    'added', jsonb_agg(jsonb_build_object(${COPIED_MEMBER_JSON})
                                       ORDER BY c.user_id),
                    'removed', '[]'::jsonb,
                    'changed', '[]'::jsonb)
           FROM ${copied} c
           GROUP BY c.module_id
         ) x
         ORDER BY x.part, x.n
         RETURNING type`;

/**
 * The feed's horizon: no event with a smaller `txid` can appear any more. `change_event_horizon()` (migration
 * FeedHorizon) is the oldest transaction id of this database still in progress, from the statement's snapshot;
 * transactions of the server's other databases do not count (docs/events.md, "What holds the feed back").
 */
const HORIZON = `SELECT change_event_horizon() AS xmin`;

/** How many events of each type a transaction wrote. */
type EventCounts = Map<ChangeEventType, number>;

/**
 * The only code that writes `change_events` (the outbox of docs/events.md) and prunes it; the feed's reads are
 * ChangeFeedRepository's. It also follows TypeORM's transaction events, so that what a transaction appended is
 * reported (`onCommitted`) only once it committed.
 */
@Injectable()
export class ChangeEventsRepository implements EntitySubscriberInterface {
  private readonly uncommitted = new WeakMap<QueryRunner, EventCounts>();

  private committedListener: ((counts: EventCounts) => void) | undefined;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    dataSource.subscribers.push(this);
  }

  /** Called with the counts of every committed transaction that appended events. */
  onCommitted(listener: (counts: EventCounts) => void): void {
    this.committedListener = listener;
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    // Also called when a savepoint is released; only the outermost commit makes the events real.
    if (event.queryRunner.isTransactionActive) return;
    const counts = this.uncommitted.get(event.queryRunner);
    if (counts === undefined) return;
    this.uncommitted.delete(event.queryRunner);
    this.committedListener?.(counts);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) this.uncommitted.delete(event.queryRunner);
  }

  /**
   * Inserts the events in `manager`'s transaction, in the order given, and notifies the feed's listeners; the
   * rows and the notification become visible when that transaction commits, and vanish with it when it rolls
   * back. In a transaction Transactions opened, they are written at its end, every event of the transaction in
   * one statement with its other deferred rows (`writeRows`).
   */
  async append(manager: EntityManager, events: readonly NewChangeEvent[]): Promise<void> {
    if (events.length === 0) return;
    await writeRows(manager, CHANGE_EVENT_ROWS, events);
    const runner = manager.queryRunner;
    if (runner === undefined) return;
    const counts = this.uncommitted.get(runner) ?? new Map<ChangeEventType, number>();
    for (const event of events) counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
    this.uncommitted.set(runner, counts);
  }

  /**
   * Counts, for the written-events metric, events a statement of `manager`'s transaction wrote by itself
   * ({@link copiedMembersEventRows}); they are reported once the transaction commits, like `append`'s.
   */
  noteAppended(manager: EntityManager, written: ReadonlyMap<ChangeEventType, number>): void {
    const runner = manager.queryRunner;
    if (runner === undefined || written.size === 0) return;
    const counts = this.uncommitted.get(runner) ?? new Map<ChangeEventType, number>();
    for (const [type, n] of written) counts.set(type, (counts.get(type) ?? 0) + n);
    this.uncommitted.set(runner, counts);
  }

  /**
   * Deletes the first `limit` events of the longest prefix of the feed whose events are all older than `cutoff`
   * (and safe to serve), in `manager`'s transaction, and moves the retention watermark to the last one deleted;
   * returns how many were deleted (fewer than `limit`: the prefix is gone). A prefix, so a cursor is either
   * before the watermark (its reader missed something: 410) or after it (nothing it needs is gone). The service
   * calls it in batches (`pruneInBatches`).
   */
  async pruneBefore(cutoff: Date, limit: number, manager: EntityManager): Promise<number> {
    const [row] = await manager.query<{ deleted: number }[]>(
      `WITH horizon AS MATERIALIZED (${HORIZON}),
       stop AS MATERIALIZED (
         SELECT coalesce(s.txid, h.xmin) AS txid, coalesce(s.id, 0) AS id
         FROM horizon h
         LEFT JOIN LATERAL (
           SELECT e.txid, e.id FROM change_events e
           WHERE e.at >= $1 OR e.txid >= h.xmin
           ORDER BY e.txid, e.id
           LIMIT 1
         ) s ON true
       ),
       doomed AS MATERIALIZED (
         SELECT e.id FROM change_events e, stop
         WHERE (e.txid, e.id) < (stop.txid, stop.id)
         ORDER BY e.txid, e.id
         LIMIT $2
       ),
       deleted AS (
         DELETE FROM change_events e WHERE e.id IN (SELECT id FROM doomed)
         RETURNING e.txid, e.id
       ),
       last AS (SELECT txid, id FROM deleted ORDER BY txid DESC, id DESC LIMIT 1),
       mark AS (
         INSERT INTO change_events_pruned AS p (txid, id) SELECT txid, id FROM last
         ON CONFLICT (singleton) DO UPDATE SET txid = excluded.txid, id = excluded.id
         WHERE (p.txid, p.id) < (excluded.txid, excluded.id)
       )
       SELECT count(*)::int AS deleted FROM deleted`,
      [cutoff, limit],
    );
    return row?.deleted ?? 0;
  }
}
