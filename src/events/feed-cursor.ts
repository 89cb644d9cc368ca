import { INT64_MAX } from '../core/ids.js';
import { type FeedPosition } from './change-feed.repository.js';

/** The position before every event: the feed's start, and `next` when nothing has been served or pruned. */
export const FEED_START: FeedPosition = { txid: '0', id: '0' };

/**
 * A cursor is opaque to clients: base64url of `<txid>.<id>`, the event's place in the feed order
 * (docs/events.md). Only the canonical spelling is accepted, so one position has one cursor.
 */
export function encodeCursor(position: FeedPosition): string {
  return Buffer.from(`${position.txid}.${position.id}`).toString('base64url');
}

/** The position a cursor names, or undefined when the text is not a cursor this service gives out. */
export function decodeCursor(cursor: string): FeedPosition | undefined {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) return undefined;
  const match = /^(0|[1-9]\d{0,18})\.(0|[1-9]\d{0,18})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (match === null) return undefined;
  const [, txid, id] = match;
  if (BigInt(txid) > INT64_MAX || BigInt(id) > INT64_MAX) return undefined;
  const position = { txid, id };
  return encodeCursor(position) === cursor ? position : undefined;
}

/** Orders positions as the feed does: by `txid`, then `id`. */
export function comparePositions(a: FeedPosition, b: FeedPosition): number {
  const [at, bt] = [BigInt(a.txid), BigInt(b.txid)];
  if (at !== bt) return at < bt ? -1 : 1;
  const [ai, bi] = [BigInt(a.id), BigInt(b.id)];
  return ai === bi ? 0 : ai < bi ? -1 : 1;
}
