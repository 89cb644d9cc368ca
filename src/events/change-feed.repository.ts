import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { type PerField } from '../core/wire-shape.js';
import { isoTimestampText, jsonObjectArguments } from '../database/sql.js';
import { type ChangeEventType } from './change-event-types.js';
import { CHANGE_EVENT_FIELDS, type ChangeEventResponse } from './change-event.shape.js';

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

/**
 * The feed's reads (docs/events.md). With ChangeEventsRepository, which writes and prunes `change_events`, the only
 * code that reads it but for the webhook dispatcher's pass over events no webhook takes (WebhooksRepository).
 */
@Injectable()
export class ChangeFeedRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}
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
}
