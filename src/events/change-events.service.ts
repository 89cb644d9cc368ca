import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Draining } from '../core/draining.js';
import { Metrics } from '../observability/metrics.js';
import { JsonText } from '../core/json-text.js';
import { pruneInBatches, retentionCutoff } from '../database/retention.js';
import { type Transaction, Transactions } from '../database/transactions.js';
import { type ChangeEventType, type NewChangeEvent } from './change-event-types.js';
import {
  CursorExpired,
  FeedBusy,
  INTEGRATION_TOKEN_MAX_WAITING,
  TokenWaitingFull,
} from './change-event.errors.js';
import { ChangeEventNotifications } from './change-event-notifications.js';
import { type ChangeEventResponse } from './change-event.shape.js';
import { ChangeEventsRepository } from './change-events.repository.js';
import { type FeedPageJson, ChangeFeedRepository } from './change-feed.repository.js';
import { comparePositions, encodeCursor, FEED_START } from './feed-cursor.js';
import { type FeedParams } from './feed-params.js';
import { FeedWaiters } from './feed-waiters.js';

/** The feed's answer; sent as JSON text built by PostgreSQL (`readPageJson`). */
export interface FeedAnswer {
  events: ChangeEventResponse[];
  next: string;
}

/**
 * Records change events in the caller's transaction, serves the feed (with long-poll), and prunes events after
 * the retention period (the daily prune runs in src/workers/).
 */
@Injectable()
export class ChangeEventsService implements OnApplicationShutdown {
  /** Requests of this replica holding a long-poll slot now. */
  private holding = 0;
  /** Of those, the ones each integration token holds, by token id. */
  private readonly holdingByToken = new Map<number, number>();
  private readonly reads: Counter<'read'>;
  /** The requests this replica holds, answered together from one read per wake-up. */
  private readonly waiters: FeedWaiters;
  private readonly stopListening: () => void;
  private readonly stopDrainWatch: () => void;

  constructor(
    private readonly events: ChangeEventsRepository,
    private readonly feedReads: ChangeFeedRepository,
    private readonly notifications: ChangeEventNotifications,
    private readonly draining: Draining,
    metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transactions: Transactions,
  ) {
    const written = new Counter({
      name: 'change_events_written_total',
      help: 'Change events written by committed transactions, by type',
      labelNames: ['type'],
      registers: [metrics.registry],
    });
    this.reads = new Counter({
      name: 'change_event_feed_reads_total',
      help:
        'Reads of the change event feed by GET /api/events: the own read of a request (read="request"), and one per ' +
        'wake-up for all the requests this replica holds (read="waiters")',
      labelNames: ['read'],
      registers: [metrics.registry],
    });
    const holding = () => this.holding;
    new Gauge({
      name: 'change_event_feed_waiting',
      help: 'GET /api/events requests held by this replica (long-poll), bounded by EVENT_FEED_MAX_WAITING',
      registers: [metrics.registry],
      collect() {
        this.set(holding());
      },
    });
    this.waiters = new FeedWaiters(
      {
        read: (after, types, limit) => feedReads.readShared(after, types, limit),
        get connected() {
          return notifications.connected;
        },
      },
      () => this.reads.inc({ read: 'waiters' }),
    );
    this.stopListening = notifications.subscribe(() => this.waiters.wake());
    // Shutdown answers every held request at once, with what one last read finds.
    this.stopDrainWatch = draining.onDrain(() => this.waiters.drain());
    events.onCommitted((counts) => {
      for (const [type, count] of counts) written.inc({ type }, count);
    });
  }

  /**
   * Writes the events of one change in the change's transaction: they commit or roll back with it. Pass one
   * event per affected resource (docs/events.md).
   */
  record(transaction: Transaction, events: readonly NewChangeEvent[]): Promise<void> {
    return this.events.append(transaction, events);
  }

  /**
   * Counts events a statement of the transaction wrote by itself (the rollover's member copy,
   * `copiedMembersEventRows`) in the written-events metric, once the transaction commits.
   */
  noteWritten(transaction: Transaction, written: ReadonlyMap<ChangeEventType, number>): void {
    this.events.noteAppended(transaction, written);
  }

  /** How many feed requests this replica holds (long-poll) now. */
  get waiting(): number {
    return this.holding;
  }

  /** `GET /api/events`; `tokenId` names the integration token calling, null for a person. */
  async feed(params: FeedParams, tokenId: number | null = null): Promise<JsonText<FeedAnswer>> {
    const deadline = Date.now() + params.waitMs;
    let holding = false;
    try {
      for (;;) {
        // Noted before the read, so a commit between the read and the wait still makes a read for this request.
        const seen = this.waiters.wakeUps;
        this.reads.inc({ read: 'request' });
        const page = await this.feedReads.readPageJson(params.after, params.types, params.limit);
        if (
          params.after !== null &&
          page.pruned !== null &&
          comparePositions(params.after, page.pruned) < 0
        ) {
          throw new CursorExpired();
        }
        if (
          params.waitMs === 0 ||
          page.last !== null ||
          deadline - Date.now() <= 0 ||
          this.draining.stopping
        ) {
          return this.answer(params, page);
        }
        if (!holding) {
          const ofToken = tokenId === null ? 0 : (this.holdingByToken.get(tokenId) ?? 0);
          if (ofToken >= INTEGRATION_TOKEN_MAX_WAITING) throw new TokenWaitingFull();
          if (this.holding >= this.config.eventFeedMaxWaiting) throw new FeedBusy();
          this.holding += 1;
          if (tokenId !== null) this.holdingByToken.set(tokenId, ofToken + 1);
          holding = true;
        }
        const outcome = await this.waiters.wait({
          after: params.after,
          types: params.types,
          limit: params.limit,
          deadline,
          seen,
          pending: page.pending,
        });
        switch (outcome.kind) {
          case 'events':
            return this.answer(params, {
              ...page,
              eventsJson: `[${outcome.events.map((event) => event.json).join(',')}]`,
              last: outcome.events[outcome.events.length - 1],
            });
          case 'expired':
            throw new CursorExpired();
          case 'none':
            return this.answer(params, page);
          case 'failed':
            throw outcome.error;
          case 'reread':
            continue;
        }
      }
    } finally {
      if (holding) this.release(tokenId);
    }
  }

  private release(tokenId: number | null): void {
    this.holding -= 1;
    if (tokenId === null) return;
    const left = (this.holdingByToken.get(tokenId) ?? 1) - 1;
    if (left <= 0) this.holdingByToken.delete(tokenId);
    else this.holdingByToken.set(tokenId, left);
  }

  private answer(params: FeedParams, page: FeedPageJson): JsonText<FeedAnswer> {
    const next =
      page.last !== null
        ? encodeCursor(page.last)
        : (params.afterCursor ?? encodeCursor(page.pruned ?? FEED_START));
    return new JsonText('{"events":', page.eventsJson, `,"next":${JSON.stringify(next)}}`);
  }

  /**
   * Deletes events older than the retention period (as a prefix of the feed), in batches under the long bounds;
   * 0 days keeps everything.
   */
  async prune(now = new Date()): Promise<number> {
    const days = this.config.eventRetentionDays;
    if (days === 0) return 0;
    const cutoff = retentionCutoff(now, days);
    return pruneInBatches(this.transactions, (transaction, size) =>
      this.events.pruneBefore(cutoff, size, transaction),
    );
  }

  onApplicationShutdown(): void {
    this.stopListening();
    this.stopDrainWatch();
  }
}
