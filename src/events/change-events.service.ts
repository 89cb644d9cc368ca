import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Draining } from '../core/draining.js';
import { Metrics } from '../observability/metrics.js';
import { JsonText } from '../core/json-text.js';
import { type Query } from '../core/query.js';
import { pruneDaily, retentionCutoff } from '../database/retention.js';
import { type Transaction } from '../database/transactions.js';
import { type NewChangeEvent } from './change-event-types.js';
import { CursorExpired, FeedBusy } from './change-event.errors.js';
import { ChangeEventNotifications } from './change-event-notifications.js';
import { type ChangeEventResponse } from './change-event.mapper.js';
import { type FeedPageJson, ChangeEventsRepository } from './change-events.repository.js';
import { comparePositions, encodeCursor, FEED_START } from './feed-cursor.js';
import { type FeedParams, readFeedParams } from './feed-params.js';

/**
 * When a committed event waits behind an older transaction still running (docs/events.md), no notification
 * announces the moment that transaction ends if it wrote no event; the feed re-reads on this backoff instead.
 */
const HELD_BACK_RECHECK_MS = [10, 20, 50, 100, 200, 500];
/** While the listener connection is down, waiting requests re-read this often. */
const UNLISTENED_RECHECK_MS = 1000;

/** The feed's answer; sent as JSON text built by PostgreSQL (`readPageJson`). */
export interface FeedAnswer {
  events: ChangeEventResponse[];
  next: string;
}

/**
 * Records change events in the caller's transaction, serves the feed (with long-poll), and prunes events after
 * the retention period.
 */
@Injectable()
export class ChangeEventsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ChangeEventsService.name);
  private stopPruning: (() => void) | undefined;
  /** Requests of this replica holding a long-poll slot now. */
  private holding = 0;

  constructor(
    private readonly events: ChangeEventsRepository,
    private readonly notifications: ChangeEventNotifications,
    private readonly draining: Draining,
    metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    const written = new Counter({
      name: 'change_events_written_total',
      help: 'Change events written by committed transactions, by type',
      labelNames: ['type'],
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

  /** How many feed requests this replica holds (long-poll) now. */
  get waiting(): number {
    return this.holding;
  }

  /** `GET /api/events`. */
  async feed(query: Query): Promise<JsonText<FeedAnswer>> {
    const params = readFeedParams(query);
    const deadline = Date.now() + params.waitMs;
    let holding = false;
    let recheck = 0;
    try {
      for (;;) {
        // Taken before the read, so a commit between the read and the wait still wakes this request.
        const ticket = params.waitMs > 0 ? this.notifications.next() : undefined;
        const page = await this.events.readPageJson(params.after, params.types, params.limit);
        if (
          params.after !== null &&
          page.pruned !== null &&
          comparePositions(params.after, page.pruned) < 0
        ) {
          ticket?.cancel();
          throw new CursorExpired();
        }
        const remaining = deadline - Date.now();
        if (ticket === undefined || page.last !== null || remaining <= 0 || this.draining.stopping) {
          ticket?.cancel();
          return this.answer(params, page);
        }
        if (!holding) {
          if (this.holding >= this.config.eventFeedMaxWaiting) {
            ticket.cancel();
            throw new FeedBusy();
          }
          this.holding += 1;
          holding = true;
        }
        let bound = remaining;
        if (page.pending) bound = Math.min(bound, HELD_BACK_RECHECK_MS[Math.min(recheck++, 5)]);
        else recheck = 0;
        if (!this.notifications.connected) bound = Math.min(bound, UNLISTENED_RECHECK_MS);
        await this.sleep(ticket, bound);
      }
    } finally {
      if (holding) this.holding -= 1;
    }
  }

  /** Until the ticket's notification, `ms`, or the start of shutdown, whichever comes first. */
  private async sleep(ticket: { woken: Promise<void>; cancel(): void }, ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let stopDrain: (() => void) | undefined;
    try {
      await Promise.race([
        ticket.woken,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, ms);
          stopDrain = this.draining.onDrain(resolve);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      stopDrain?.();
      ticket.cancel();
    }
  }

  private answer(params: FeedParams, page: FeedPageJson): JsonText<FeedAnswer> {
    const next =
      page.last !== null
        ? encodeCursor(page.last)
        : (params.afterCursor ?? encodeCursor(page.pruned ?? FEED_START));
    return new JsonText('{"events":', page.eventsJson, `,"next":${JSON.stringify(next)}}`);
  }

  /** Deletes events older than the retention period (as a prefix of the feed); 0 days keeps everything. */
  async prune(now = new Date()): Promise<number> {
    const days = this.config.eventRetentionDays;
    if (days === 0) return 0;
    return this.events.pruneBefore(retentionCutoff(now, days));
  }

  onApplicationBootstrap(): void {
    if (this.config.eventRetentionDays === 0 || !this.config.backgroundWorkers) return;
    this.stopPruning = pruneDaily(() => this.prune(), 'change events', this.logger);
  }

  onApplicationShutdown(): void {
    this.stopPruning?.();
  }
}
