import { type Query, QueryReader } from '../core/query.js';
import {
  type ChangeEventType,
  CHANGE_EVENT_TYPES,
  INVALID_EVENT_TYPE_MESSAGE,
  isChangeEventType,
} from './change-event-types.js';
import { INVALID_CURSOR_MESSAGE } from './change-event.errors.js';
import { type FeedPosition } from './change-feed.repository.js';
import { decodeCursor } from './feed-cursor.js';

export const FEED_LIMIT_DEFAULT = 100;
export const FEED_LIMIT_MAX = 1000;
export const FEED_WAIT_MAX_SECONDS = 30;

export interface FeedParams {
  /** Null: from the oldest kept event. */
  after: FeedPosition | null;
  /** The cursor as sent, returned as `next` when nothing new is served. */
  afterCursor: string | null;
  /** Null: every type. */
  types: readonly ChangeEventType[] | null;
  limit: number;
  waitMs: number;
}

/**
 * `GET /api/events`: `after`, `types`, `limit` (clamped to 1..1000 like `per_page`), `wait` in seconds (clamped
 * to 0..30). Integers follow the query-string rule of every list.
 */
export function readFeedParams(query: Query): FeedParams {
  const reader = new QueryReader(query);
  const afterCursor = reader.string('after') ?? null;
  const after = afterCursor === null ? null : (decodeCursor(afterCursor) ?? null);
  if (afterCursor !== null && after === null) reader.invalid(INVALID_CURSOR_MESSAGE);
  const rawTypes = reader.string('types');
  let types: ChangeEventType[] | null = null;
  if (rawTypes !== undefined) {
    const names = rawTypes
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    if (names.length === 0 || !names.every(isChangeEventType)) reader.invalid(INVALID_EVENT_TYPE_MESSAGE);
    // Every type named is every type: no filter, and the query keeps the plain index.
    else
      types =
        names.length >= CHANGE_EVENT_TYPES.length && CHANGE_EVENT_TYPES.every((t) => names.includes(t))
          ? null
          : [...new Set(names)];
  }
  const limit = reader.int('limit');
  const wait = reader.int('wait');
  reader.done();
  return {
    after,
    afterCursor,
    types,
    limit: Math.min(Math.max(limit ?? FEED_LIMIT_DEFAULT, 1), FEED_LIMIT_MAX),
    waitMs: Math.min(Math.max(wait ?? 0, 0), FEED_WAIT_MAX_SECONDS) * 1000,
  };
}
