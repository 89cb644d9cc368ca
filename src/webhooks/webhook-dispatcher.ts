import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { ChangeEventNotifications } from '../events/change-event-notifications.js';
import { ChangeEventsRepository, type StoredChangeEvent } from '../events/change-events.repository.js';
import { encodeCursor } from '../events/feed-cursor.js';
import { type DeliveryJob, DeliveryQueue } from './delivery-queue.js';
import { takes } from './webhook-types.js';
import { WebhooksRepository } from './webhooks.repository.js';

/** Events read and turned into jobs per transaction. */
const BATCH = 500;
/** While the feed's notifications arrive, an idle replica reads only when woken, or after this long anyway. */
const IDLE_POLL_MS = 60_000;
/** Without notifications (the listener reconnecting), an idle replica reads this often. */
const UNLISTENED_POLL_MS = 1000;
/** After a failed round. */
const FAILED_POLL_MS = 1000;
/** Events are there but not safe to serve yet (an older transaction is still running): look again soon. */
const PENDING_POLL_MS = 50;
/**
 * Rounds start at least this far apart unless one filled a batch: a stream of commits, each notifying, is served
 * by a round per interval instead of one per commit (docs/performance.md, "Fifth round").
 */
const ROUND_GAP_MS = 10;
/**
 * After a round that enqueued nothing (the events were passed over: no enabled webhook takes them), the next
 * round starts at least this long after it: a stream of writes no webhook takes costs up to 20 rounds a second,
 * not one per commit. The first notification after a quiet spell is served at once.
 */
const IDLE_ROUND_GAP_MS = 50;

interface DispatchResult {
  /** Events the position moved past. */
  dispatched: number;
  /** Jobs enqueued for them. */
  jobs: number;
  /** Another replica holds the position: it is dispatching. */
  busy: boolean;
  pending: boolean;
}

/**
 * Follows the change feed from a stored position and turns each event into one job per enabled webhook that
 * takes its type. The jobs are enqueued in the transaction that moves the position, under a row lock taken
 * with SKIP LOCKED: whichever replica holds it dispatches, the others wait for the next round, and an event is
 * enqueued once whatever crashes when (docs/webhooks.md). Runs on every replica, never on a request's path.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhookDispatcher');
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wakeSleep: (() => void) | undefined;
  private backlog: Date | null = null;

  constructor(
    private readonly events: ChangeEventsRepository,
    private readonly notifications: ChangeEventNotifications,
    private readonly webhooks: WebhooksRepository,
    private readonly queue: DeliveryQueue,
    private readonly transactions: Transactions,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.backgroundWorkers) this.loop = this.run();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.wakeSleep?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      // Taken before reading, so a commit between the read and the wait still wakes us.
      const ticket = this.notifications.next();
      const started = Date.now();
      let result: DispatchResult | undefined;
      try {
        result = await this.dispatchOnce();
      } catch (error) {
        this.logger.warn('Dispatching change events to webhooks failed', error);
      }
      if (result && result.jobs > 0) this.queue.wake();
      if (result && result.dispatched === BATCH) {
        ticket.cancel();
        continue;
      }
      // No notification comes when an older transaction ends and makes waiting events safe: poll while pending.
      // A round that failed (the database away, a statement refused) is tried again soon, not at the next
      // notification: the events it left are waiting.
      const pause = !result
        ? FAILED_POLL_MS
        : result.pending || result.busy
          ? PENDING_POLL_MS
          : this.notifications.connected
            ? IDLE_POLL_MS
            : UNLISTENED_POLL_MS;
      await this.sleep(pause, ticket.woken);
      ticket.cancel();
      // Commits that notify while this waits are served by the next round together.
      const gap = result && result.jobs === 0 && !result.busy ? IDLE_ROUND_GAP_MS : ROUND_GAP_MS;
      await this.sleep(gap - (Date.now() - started));
    }
  }

  /** Until `ms` have passed, `woken` resolves, or the service stops, whichever comes first. */
  private async sleep(ms: number, woken?: Promise<void>): Promise<void> {
    if (this.stopped || ms <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeSleep = () => {
        clearTimeout(timer);
        resolve();
      };
      void woken?.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Roughly when the oldest event not dispatched yet was written: the last dispatched event's time while this
   * replica's last round left more behind, else null. Kept in memory: the metric reads it without a query.
   */
  get backlogSince(): Date | null {
    return this.backlog;
  }

  /**
   * One round. Events no enabled webhook takes are passed over by one statement, without their data
   * (`skipUnwantedEvents`); otherwise the next events after the position, their jobs, and the new position, in
   * one transaction.
   */
  async dispatchOnce(): Promise<DispatchResult> {
    const skip = await this.webhooks.skipUnwantedEvents(BATCH);
    if (!skip.wanted) {
      // A busy round says nothing of the backlog: the replica that moved the position knows it.
      if (!skip.busy) this.backlog = skip.skipped === BATCH ? skip.lastAt : null;
      return { dispatched: skip.skipped, jobs: 0, busy: skip.busy, pending: skip.pending };
    }
    return this.transactions.run(async (transaction) => {
      const position = await this.webhooks.lockDispatchPosition(transaction);
      if (position === undefined) return { dispatched: 0, jobs: 0, busy: true, pending: false };
      const page = await this.events.readPage(position, null, BATCH);
      if (page.events.length === 0) {
        this.backlog = null;
        return { dispatched: 0, jobs: 0, busy: false, pending: page.pending };
      }
      const subscriptions = await this.webhooks.enabledSubscriptions(transaction);
      const now = new Date().toISOString();
      const jobs: DeliveryJob[] = [];
      for (const event of page.events) {
        for (const webhook of subscriptions) {
          if (takes(webhook.types, event.type)) jobs.push(jobFor(String(webhook.id), event, now));
        }
      }
      await this.queue.enqueue(jobs, null, transaction);
      const last = page.events[page.events.length - 1];
      await this.webhooks.saveDispatchPosition({ txid: last.txid, id: last.id }, transaction);
      this.backlog = page.events.length === BATCH ? last.at : null;
      return { dispatched: page.events.length, jobs: jobs.length, busy: false, pending: page.pending };
    });
  }
}

function jobFor(webhookId: string, event: StoredChangeEvent, now: string): DeliveryJob {
  return {
    webhookId,
    // The feed's event id: a receiver reading the feed too can match the two.
    event: { id: encodeCursor(event), type: event.type, at: event.at.toISOString(), data: event.data },
    attempt: 1,
    firstAt: now,
  };
}
