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
import { isoTimestampText, jsonObjectArguments } from '../database/sql.js';
import { type DeferredRows, writeRows } from '../database/transactions.js';
import { type ChangeEventType, type NewChangeEvent } from './change-event-types.js';
import {
  CHANGE_EVENT_FIELDS,
  type ChangeEventResponse,
  MEMBER_ROLE_FIELDS,
  type MemberRole,
} from './change-event.shape.js';

/**
 * An event of the relation `p` (a page of `change_events`) as the feed writes it, one SQL expression per field of
 * the wire shape (change-event.shape.ts): `id` the cursor as `encodeCursor` writes it, `at` as ISO text.
 */
const CHANGE_EVENT_JSON_SQL = {
  id: `rtrim(translate(encode(convert_to(p.txid::text || '.' || p.id::text, 'UTF8'), 'base64'),
                                       '+/', '-_'), '=')`,
  type: 'p.type',
  at: isoTimestampText('p.at'),
  data: 'p.data',
} as const satisfies PerField<ChangeEventResponse, string>;

/** `json_build_object`'s arguments for an event of `p`, in the wire order. */
const CHANGE_EVENT_JSON = jsonObjectArguments(
  CHANGE_EVENT_FIELDS,
  CHANGE_EVENT_JSON_SQL,
  '                 ',
);

/**
 * A place in the feed: the writing transaction's id and the event's id, both as decimal strings (64-bit values
 * that JSON numbers and the INT8 parser could round). The feed is ordered by `(txid, id)`.
 */
export interface FeedPosition {
  txid: string;
  id: string;
}

/** An event as stored; `id` and `txid` are decimal strings. */
export interface StoredChangeEvent {
  id: string;
  txid: string;
  type: ChangeEventType;
  at: Date;
  data: unknown;
}

/** One read of the feed, from one snapshot. */
interface FeedPage {
  /** Events after the position, in feed order, all safe to serve (see `readAfter`). */
  events: StoredChangeEvent[];
  /** The position up to which retention has deleted events; null before the first prune. */
  pruned: FeedPosition | null;
  /** Events (of the types asked for) exist after the position but are not safe to serve yet. */
  pending: boolean;
}

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

/**
 * The horizon for a read of the events that `after` and `ofTypes` select: the whole server's oldest running
 * transaction (`pg_snapshot_xmin`, no catalog read) when no such event lies at or past it, for then both give
 * the same answer; `change_event_horizon()` (which lists the server's backends) only when one does.
 */
const horizonFor = (after: string, ofTypes: string) => `SELECT CASE
           WHEN EXISTS (SELECT 1 FROM change_events e
                        WHERE e.txid >= pg_snapshot_xmin(pg_current_snapshot())::text::bigint
                          AND ${after} AND ${ofTypes})
           THEN change_event_horizon()
           ELSE pg_snapshot_xmin(pg_current_snapshot())::text::bigint
         END AS xmin`;

/** One read of the feed as JSON text (`readPageJson`). */
export interface FeedPageJson {
  /** The JSON array of the events, as the feed answers them. */
  eventsJson: string;
  /** The position of the last event in it; null when it is empty. */
  last: FeedPosition | null;
  pruned: FeedPosition | null;
  pending: boolean;
}

/** One event of a shared read: its position, type and its JSON text as the feed answers it. */
export interface SharedFeedEvent extends FeedPosition {
  type: ChangeEventType;
  json: string;
}

/** The read that answers every request a replica holds (`readShared`). */
export interface SharedFeedPage {
  events: SharedFeedEvent[];
  /** The read stopped at its limit: more events may follow the last one. */
  truncated: boolean;
  pruned: FeedPosition | null;
  /** The types of the events (after the position, of the types asked) that wait behind the horizon. */
  pendingTypes: string[];
}

interface SharedFeedRow {
  pruned_txid: string | null;
  pruned_id: string | null;
  pending_types: string[];
  events: string;
}

interface FeedJsonRow {
  pruned_txid: string | null;
  pruned_id: string | null;
  pending: boolean;
  last_txid: string | null;
  last_id: string | null;
  events: string;
}

/**
 * The first part of both feed reads: the horizon, the retention watermark and whether events wait behind the
 * horizon, read once (`head`), and the conditions on `e` for the position and the types.
 */
function feedHead(position: FeedPosition | null, types: readonly string[] | null, limit: number) {
  const params: unknown[] = [limit];
  const after =
    position === null
      ? 'true'
      : `(e.txid, e.id) > ($${params.push(position.txid)}::bigint, $${params.push(position.id)}::bigint)`;
  const ofTypes = types === null ? 'true' : `e.type = ANY($${params.push(types)}::text[])`;
  const head = `WITH head AS MATERIALIZED (
         SELECT h.xmin, p.txid::text AS pruned_txid, p.id::text AS pruned_id,
                EXISTS (SELECT 1 FROM change_events e WHERE e.txid >= h.xmin AND ${after} AND ${ofTypes}) AS pending
         FROM (${horizonFor(after, ofTypes)}) h
         -- One row at most (a singleton table); LIMIT tells the planner so, whatever its statistics say.
         LEFT JOIN (SELECT txid, id FROM change_events_pruned LIMIT 1) p ON true
       )`;
  return { params, after, ofTypes, head };
}

interface FeedRow {
  pruned_txid: string | null;
  pruned_id: string | null;
  pending: boolean;
  id: string | null;
  txid: string | null;
  type: ChangeEventType | null;
  at: Date | null;
  data: unknown;
}

/** How many events of each type a transaction wrote. */
type EventCounts = Map<ChangeEventType, number>;

/**
 * The only code that writes `change_events` (the outbox of docs/events.md), and the only one that reads it but
 * for the webhook dispatcher's pass over events no webhook takes (WebhooksRepository). It also follows TypeORM's
 * transaction events, so that what a transaction appended is reported (`onCommitted`) only once it committed.
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
   * Up to `limit` events after `position` (from the oldest kept event when null), of `types` (all when null),
   * in feed order, served only when their transaction is older than every one still in progress: such an
   * event can never be preceded by one that is not there yet (docs/events.md).
   */
  async readAfter(
    position: FeedPosition | null,
    types: readonly string[] | null,
    limit: number,
  ): Promise<StoredChangeEvent[]> {
    return (await this.readPage(position, types, limit)).events;
  }

  /** `readAfter`, with the retention watermark and whether unsafe events wait, all from one snapshot. */
  async readPage(
    position: FeedPosition | null,
    types: readonly string[] | null,
    limit: number,
  ): Promise<FeedPage> {
    const { params, after, ofTypes, head } = feedHead(position, types, limit);
    const rows = await this.dataSource.query<FeedRow[]>(
      `${head}
       SELECT head.pruned_txid, head.pruned_id, head.pending, f.id, f.txid, f.type, f.at, f.data
       FROM head
       LEFT JOIN LATERAL (
         SELECT e.txid AS txid_order, e.id AS id_order, e.id::text AS id, e.txid::text AS txid,
                e.type, e.at, e.data
         FROM change_events e
         WHERE e.txid < head.xmin AND ${after} AND ${ofTypes}
         ORDER BY e.txid, e.id
         LIMIT $1
       ) f ON true
       ORDER BY f.txid_order, f.id_order`,
      params,
    );
    const first = rows[0];
    const pruned =
      first?.pruned_txid != null && first.pruned_id != null
        ? { txid: first.pruned_txid, id: first.pruned_id }
        : null;
    const events = rows
      .filter((row) => row.id !== null)
      .map((row) => ({
        id: row.id!,
        txid: row.txid!,
        type: row.type!,
        at: row.at!,
        data: row.data,
      }));
    return { events, pruned, pending: first?.pending ?? false };
  }

  /**
   * `readPage` for the feed route: the events as the JSON text of the answer's `events` array, built by
   * PostgreSQL (`{id, type, at, data}`, `id` the cursor as `encodeCursor` writes it), so that 1 000 events are
   * neither parsed into objects nor serialised again.
   */
  async readPageJson(
    position: FeedPosition | null,
    types: readonly string[] | null,
    limit: number,
  ): Promise<FeedPageJson> {
    const { params, after, ofTypes, head } = feedHead(position, types, limit);
    const [row] = await this.dataSource.query<FeedJsonRow[]>(
      `${head},
       page AS MATERIALIZED (
         SELECT e.txid, e.id, e.type, e.at, e.data
         FROM change_events e, head
         WHERE e.txid < head.xmin AND ${after} AND ${ofTypes}
         ORDER BY e.txid, e.id
         LIMIT $1
       ),
       last AS (SELECT txid, id FROM page ORDER BY txid DESC, id DESC LIMIT 1)
       SELECT head.pruned_txid, head.pruned_id, head.pending,
              (SELECT txid::text FROM last) AS last_txid, (SELECT id::text FROM last) AS last_id,
              (SELECT coalesce(json_agg(json_build_object(
                 ${CHANGE_EVENT_JSON}) ORDER BY p.txid, p.id), '[]')::text FROM page p) AS events
       FROM head`,
      params,
    );
    return {
      eventsJson: row.events,
      last: row.last_txid !== null && row.last_id !== null ? { txid: row.last_txid, id: row.last_id } : null,
      pruned:
        row.pruned_txid !== null && row.pruned_id !== null
          ? { txid: row.pruned_txid, id: row.pruned_id }
          : null,
      pending: row.pending,
    };
  }

  /**
   * The read that answers every request a replica holds (docs/events.md, "Long-poll"): `readPageJson`'s events,
   * each as its own JSON text with its position and type, so that each held request takes those after its own
   * `after`, of its own types, up to its own limit; and the types of the events that wait behind the horizon.
   */
  async readShared(
    position: FeedPosition | null,
    types: readonly string[] | null,
    limit: number,
  ): Promise<SharedFeedPage> {
    const { params, after, ofTypes, head } = feedHead(position, types, limit);
    const [row] = await this.dataSource.query<SharedFeedRow[]>(
      `${head}
       SELECT head.pruned_txid, head.pruned_id,
              CASE WHEN head.pending THEN ARRAY(
                SELECT DISTINCT e.type FROM change_events e WHERE e.txid >= head.xmin AND ${after} AND ${ofTypes}
              ) ELSE '{}' END AS pending_types,
              (SELECT coalesce(json_agg(json_build_array(p.txid::text, p.id::text, p.type, json_build_object(
                 ${CHANGE_EVENT_JSON})::text) ORDER BY p.txid, p.id), '[]')
               FROM (SELECT e.txid, e.id, e.type, e.at, e.data
                     FROM change_events e
                     WHERE e.txid < head.xmin AND ${after} AND ${ofTypes}
                     ORDER BY e.txid, e.id
                     LIMIT $1) p)::text AS events
       FROM head`,
      params,
    );
    const events = (JSON.parse(row.events) as [string, string, ChangeEventType, string][]).map(
      ([txid, id, type, json]) => ({ txid, id, type, json }),
    );
    return {
      events,
      truncated: events.length >= limit,
      pruned:
        row.pruned_txid !== null && row.pruned_id !== null
          ? { txid: row.pruned_txid, id: row.pruned_id }
          : null,
      pendingTypes: row.pending_types,
    };
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
