import { type FeedPosition, type SharedFeedEvent, type SharedFeedPage } from './change-feed.repository.js';
import { comparePositions } from './feed-cursor.js';

/**
 * When a committed event waits behind an older transaction still running (docs/events.md), no notification
 * announces the moment that transaction ends if it wrote no event; the held requests are read for again on this
 * backoff instead.
 */
export const HELD_BACK_RECHECK_MS = [10, 20, 50, 100, 200, 500];
/** While the listener connection is down, the held requests are read for this often. */
export const UNLISTENED_RECHECK_MS = 1000;

/** What a held request gets: its events, an expired cursor, nothing (its wait is over), or a read of its own. */
export type WaitOutcome =
  | { kind: 'events'; events: SharedFeedEvent[]; pruned: FeedPosition | null }
  | { kind: 'expired' }
  | { kind: 'none' }
  | { kind: 'reread' }
  | { kind: 'failed'; error: unknown };

/** A request held until an event for it arrives. */
export interface HeldRequest {
  after: FeedPosition | null;
  /** Null: every type. */
  types: readonly string[] | null;
  limit: number;
  /** Date.now() at which its wait is over. */
  deadline: number;
  /** The wake-up count ({@link FeedWaiters.wakeUps}) before the request's own read. */
  seen: number;
  /** Its own read found events of its types waiting behind the horizon. */
  pending: boolean;
}

interface Held extends HeldRequest {
  typeSet: ReadonlySet<string> | null;
  timer: NodeJS.Timeout;
  settle(outcome: WaitOutcome): void;
}

/** What the waiters need: the shared read, whether notifications can arrive, and a way to hear them. */
export interface FeedWaitersSource {
  read(after: FeedPosition | null, types: readonly string[] | null, limit: number): Promise<SharedFeedPage>;
  readonly connected: boolean;
}

/**
 * The requests one replica holds (`GET /api/events?wait=`), answered together: each wake-up (a commit's
 * notification, the re-check of events held back, the poll while the listener is down, shutdown) makes one read
 * of the feed, from the earliest `after` held, of every type held, up to the largest limit held; each request
 * takes from it the events after its own `after`, of its own types, up to its own limit, or keeps waiting. The
 * read is a contiguous stretch of the feed, so what each request takes is the start of its own feed: nothing is
 * skipped. A request that finds nothing in a read that stopped at its limit reads on its own (rare: every held
 * request had read to the end of the feed before it waited).
 */
export class FeedWaiters {
  private readonly held = new Set<Held>();
  private wakes = 0;
  private reading = false;
  private again = false;
  private final = false;
  private recheck = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;

  constructor(
    private readonly source: FeedWaitersSource,
    private readonly onRead: () => void,
  ) {}

  /** How many wake-ups have happened; a request notes it before its own read. */
  get wakeUps(): number {
    return this.wakes;
  }

  /** A commit was announced (or the listener reconnected): one read for everyone held. */
  wake(): void {
    this.wakes += 1;
    if (this.held.size > 0) this.schedule(0);
  }

  /** Shutdown: one last read, then every held request is answered with what it finds. */
  drain(): void {
    this.final = true;
    this.wakes += 1;
    if (this.held.size > 0) this.schedule(0);
  }

  /** Holds the request until a read has events for it, its wait is over, or the service stops. */
  wait(request: HeldRequest): Promise<WaitOutcome> {
    return new Promise<WaitOutcome>((resolve) => {
      const entry: Held = {
        ...request,
        typeSet: request.types === null ? null : new Set(request.types),
        timer: setTimeout(() => entry.settle({ kind: 'none' }), Math.max(0, request.deadline - Date.now())),
        settle: (outcome) => {
          if (!this.held.delete(entry)) return;
          clearTimeout(entry.timer);
          resolve(outcome);
        },
      };
      this.held.add(entry);
      // Woken between its own read and now (or stopping): its read may have missed that commit.
      if (this.final || request.seen !== this.wakes) this.schedule(0);
      else if (request.pending) this.schedule(HELD_BACK_RECHECK_MS[this.recheck]);
      else if (!this.source.connected) this.schedule(UNLISTENED_RECHECK_MS);
    });
  }

  /** A read now (after the one running, if any), or in `ms`, whichever of the scheduled reads comes first. */
  private schedule(ms: number): void {
    if (ms <= 0) {
      if (this.reading) {
        this.again = true;
        return;
      }
      clearTimeout(this.timer);
      this.timer = undefined;
      void this.read();
      return;
    }
    const at = Date.now() + ms;
    if (this.timer !== undefined && this.timerAt <= at) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.schedule(0);
    }, ms);
    this.timer.unref();
  }

  private async read(): Promise<void> {
    const batch = [...this.held];
    if (batch.length === 0) return;
    this.reading = true;
    this.again = false;
    const final = this.final;
    let pending = false;
    try {
      const after = batch.some((entry) => entry.after === null)
        ? null
        : batch.reduce<FeedPosition>(
            (min, entry) => (comparePositions(entry.after!, min) < 0 ? entry.after! : min),
            batch[0].after!,
          );
      const types = batch.some((entry) => entry.types === null)
        ? null
        : [...new Set(batch.flatMap((entry) => entry.types!))];
      const limit = Math.max(...batch.map((entry) => entry.limit));
      this.onRead();
      const page = await this.source.read(after, types, limit);
      for (const entry of batch) if (this.hand(entry, page, final)) pending = true;
    } catch (error) {
      for (const entry of batch) entry.settle({ kind: 'failed', error });
    } finally {
      this.reading = false;
    }
    if (this.held.size === 0) {
      this.recheck = 0;
      return;
    }
    if (this.again || this.final) this.schedule(0);
    else if (pending) {
      this.schedule(HELD_BACK_RECHECK_MS[Math.min(this.recheck, HELD_BACK_RECHECK_MS.length - 1)]);
      this.recheck += 1;
    } else {
      this.recheck = 0;
      if (!this.source.connected) this.schedule(UNLISTENED_RECHECK_MS);
    }
  }

  /**
   * Gives one held request what the read has for it; returns true when it keeps waiting for events of its types
   * that wait behind the horizon.
   */
  private hand(entry: Held, page: SharedFeedPage, final: boolean): boolean {
    if (!this.held.has(entry)) return false;
    if (entry.after !== null && page.pruned !== null && comparePositions(entry.after, page.pruned) < 0) {
      entry.settle({ kind: 'expired' });
      return false;
    }
    const events: SharedFeedEvent[] = [];
    for (const event of page.events) {
      if (events.length >= entry.limit) break;
      if (entry.after !== null && comparePositions(event, entry.after) <= 0) continue;
      if (entry.typeSet !== null && !entry.typeSet.has(event.type)) continue;
      events.push(event);
    }
    if (events.length > 0) entry.settle({ kind: 'events', events, pruned: page.pruned });
    else if (page.truncated) entry.settle({ kind: 'reread' });
    else if (final) entry.settle({ kind: 'none' });
    else return page.pendingTypes.some((type) => entry.typeSet === null || entry.typeSet.has(type));
    return false;
  }
}
