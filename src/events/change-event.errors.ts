import { fixedError } from '../core/errors.js';

export const INVALID_CURSOR_MESSAGE = 'Invalid cursor';
export const CURSOR_EXPIRED_MESSAGE = 'Cursor expired; start again without after';
export const FEED_BUSY_MESSAGE = 'Too many requests are waiting for events; try again later';
export const TOKEN_WAITING_MESSAGE = 'Too many requests, try again later';

/** `after` names a position before the retention watermark: events the reader never saw were pruned. */
export class CursorExpired extends fixedError(410, CURSOR_EXPIRED_MESSAGE) {}

/** Every long-poll slot of this replica is taken (EVENT_FEED_MAX_WAITING). */
export class FeedBusy extends fixedError(503, FEED_BUSY_MESSAGE) {}

/** One integration token already holds its {@link INTEGRATION_TOKEN_MAX_WAITING} long-poll places here. */
export class TokenWaitingFull extends fixedError(429, TOKEN_WAITING_MESSAGE) {}

/** Long-poll places one integration token may hold on a replica, so one consumer cannot take them all. */
export const INTEGRATION_TOKEN_MAX_WAITING = 10;
