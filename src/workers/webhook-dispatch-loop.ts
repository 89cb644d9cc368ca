import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ChangeEventNotifications } from '../events/change-event-notifications.js';
import { DeliveryQueue } from '../webhooks/delivery-queue.js';
import { DISPATCH_BATCH, type DispatchResult, WebhookDispatcher } from '../webhooks/webhook-dispatcher.js';

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

/**
 * The dispatcher's loop: a round ({@link WebhookDispatcher.dispatchOnce}) whenever a commit notifies the feed,
 * polling where no notification comes, on every replica. Shutdown stops it before the delivery queue stops
 * (this module's hook runs before the webhooks module's).
 */
@Injectable()
export class WebhookDispatchLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhookDispatcher');
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wakeSleep: (() => void) | undefined;

  constructor(
    private readonly dispatcher: WebhookDispatcher,
    private readonly notifications: ChangeEventNotifications,
    private readonly queue: DeliveryQueue,
  ) {}

  onApplicationBootstrap(): void {
    this.loop = this.run();
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
        result = await this.dispatcher.dispatchOnce();
      } catch (error) {
        this.logger.warn('Dispatching change events to webhooks failed', error);
      }
      if (result && result.jobs > 0) this.queue.wake();
      if (result && result.dispatched === DISPATCH_BATCH) {
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
}
