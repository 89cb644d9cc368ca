import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Metrics } from '../observability/metrics.js';
import { type Transaction, Transactions } from '../database/transactions.js';
import { DeliveryQueue, type QueuedJob } from './delivery-queue.js';
import { RetrySchedule } from './retry-schedule.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { TEST_EVENT_TYPE } from './webhook-types.js';
import { type AttemptResult, post, signedRequest } from './webhook-sender.js';
import { WebhookUrlRules } from './webhook-url.js';
import { WebhookUrlNotAllowed, WEBHOOK_URL_NOT_ALLOWED_MESSAGE } from './webhook.errors.js';
import { WebhooksRepository } from './webhooks.repository.js';

/** The workers' polling interval (DeliveryQueue). */
const POLL_MS = 1000;
const DAY_MS = 86_400_000;

type DeliveryOutcome = 'delivered' | 'retrying' | 'failed';

/**
 * The workers' side: makes one attempt per job, records it, and in the same transaction schedules the next
 * attempt (or gives up), keeps the webhook's failure streak, disables it after 3 days of failures, and
 * completes the job. Never runs on a request's path.
 */
@Injectable()
export class WebhookDeliverer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly schedule: RetrySchedule;
  private pruneTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly dispatcher: WebhookDispatcher,
    private readonly webhooks: WebhooksRepository,
    private readonly rules: WebhookUrlRules,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.schedule = new RetrySchedule(config.webhooks.retryScale);
  }

  async onApplicationBootstrap(): Promise<void> {
    // Read at scrape time on pg-boss's own pool (and the dispatcher's memory), never the request pool.
    this.metrics.reportOldestUndelivered(async () => {
      const times = [await this.queue.oldestPending(), this.dispatcher.backlogSince].filter(
        (at): at is Date => at !== null,
      );
      return times.length === 0 ? null : new Date(Math.min(...times.map((at) => at.getTime())));
    });
    if (!this.config.backgroundWorkers) return;
    if (this.config.eventRetentionDays > 0) {
      const run = () =>
        this.prune()
          .then((pruned) => {
            if (pruned > 0)
              this.logger.log(`Pruned ${pruned} webhook delivery attempts past the retention period`);
          })
          .catch((error: unknown) =>
            this.logger.warn(`Could not prune webhook deliveries: ${String(error)}`),
          );
      void run();
      // Unref'd: the daily prune never keeps the process alive on shutdown.
      this.pruneTimer = setInterval(() => void run(), DAY_MS).unref();
    }
    await this.queue.work(async (jobs) => {
      await this.deliverAll(jobs).catch((error: unknown) => {
        // pg-boss fails the batch's jobs and runs them again later; attempts recorded already are not repeated.
        this.logger.warn(`Recording webhook deliveries failed: ${String(error)}`);
        throw error;
      });
    });
  }

  onApplicationShutdown(): void {
    clearInterval(this.pruneTimer);
  }

  /** Deletes delivery attempts older than EVENT_RETENTION_DAYS (the events' own retention); 0 keeps them. */
  async prune(now = new Date()): Promise<number> {
    const days = this.config.eventRetentionDays;
    if (days === 0) return 0;
    return this.webhooks.pruneDeliveriesBefore(new Date(now.getTime() - days * DAY_MS));
  }

  /**
   * One batch: every attempt at once (none holds a database connection while it waits for a receiver), then
   * one transaction records them all, schedules the retries and completes the jobs. A replica that dies before
   * that commit leaves the batch's jobs active; pg-boss hands them to another replica once they expire, which
   * attempts them again (at least once; receivers dedupe on webhook-id). Never throws for a receiver's failure.
   */
  async deliverAll(jobs: QueuedJob[]): Promise<DeliveryOutcome[]> {
    const webhooks = new Map(
      (await this.webhooks.findByIds([...new Set(jobs.map((job) => job.data.webhookId))])).map((row) => [
        String(row.id),
        row,
      ]),
    );
    // Deleted or turned off meanwhile: its pending deliveries are dropped (a test event still goes out).
    const live = jobs.filter((job) => {
      const webhook = webhooks.get(job.data.webhookId);
      return webhook !== undefined && (webhook.enabled || job.data.event.type === TEST_EVENT_TYPE);
    });
    const attempts = await Promise.all(
      live.map(async (job) => {
        const webhook = webhooks.get(job.data.webhookId)!;
        const startedAt = new Date();
        const result = await this.attempt(webhook.url, webhook.secret, job, startedAt);
        const next = result.delivered
          ? null
          : this.schedule.nextAttemptAt(job.data.attempt, new Date(job.data.firstAt), new Date());
        const outcome: DeliveryOutcome = result.delivered ? 'delivered' : next ? 'retrying' : 'failed';
        return { job, startedAt, result, next, outcome };
      }),
    );
    // Cut short by shutdown: nothing is recorded, and pg-boss retries the jobs (the same attempts) later.
    if (this.queue.stopSignal.aborted) throw new Error('Webhook deliveries interrupted by shutdown');
    const recorded = await this.transactions.run(async (transaction) => {
      const fresh: typeof attempts = [];
      for (const entry of attempts) if (await this.record(entry, transaction)) fresh.push(entry);
      for (const job of jobs) await this.queue.complete(job.id, transaction);
      return fresh;
    });
    for (const { next, outcome } of recorded) {
      this.metrics.webhookDelivery(outcome);
      // A retry due before the workers' next poll (the schedule shrunk for tests) wakes them when it is due.
      if (next && next.getTime() - Date.now() < POLL_MS)
        setTimeout(() => this.queue.wake(), Math.max(0, next.getTime() - Date.now())).unref();
    }
    return recorded.map((entry) => entry.outcome);
  }

  /** Records one attempt and its consequences; false when this attempt was recorded already. */
  private async record(
    entry: {
      job: QueuedJob;
      startedAt: Date;
      result: AttemptResult;
      next: Date | null;
      outcome: DeliveryOutcome;
    },
    transaction: Transaction,
  ): Promise<boolean> {
    const { job, startedAt, result, next, outcome } = entry;
    const { webhookId, event, attempt } = job.data;
    const fresh = await this.webhooks.recordAttempt(
      {
        webhook_id: webhookId,
        event_id: event.id,
        event_type: event.type,
        attempt,
        at: startedAt,
        outcome,
        status_code: result.statusCode,
        error: result.error,
        duration_ms: result.durationMs,
        response_excerpt: result.responseExcerpt,
        next_retry_at: next,
      },
      transaction,
    );
    if (!fresh) return false;
    if (result.delivered) {
      await this.webhooks.markDelivered(webhookId, transaction);
      return true;
    }
    if (next) await this.queue.enqueue([{ ...job.data, attempt: attempt + 1 }], next, transaction);
    const disabled = await this.webhooks.markFailed(webhookId, this.schedule.giveUpAfterMs, transaction);
    if (disabled) {
      await this.audit.record(
        transaction,
        { actorId: null, requestId: null, clientIp: null },
        {
          action: 'webhook.disable',
          targetType: 'webhook',
          targetIds: [disabled.id],
          summary: { url: disabled.url, types: disabled.types, enabled: false },
        },
      );
      this.logger.warn(`Webhook ${disabled.id} disabled: its deliveries have failed for 3 days`);
    }
    return true;
  }

  private async attempt(url: string, secret: string, job: QueuedJob, now: Date): Promise<AttemptResult> {
    const started = performance.now();
    try {
      // Fresh DNS answers, checked again; the connection goes to the address checked.
      const target = await this.rules.check(url);
      return await post(
        target,
        signedRequest(secret, job.data.event, now),
        this.config.webhooks.timeoutMs,
        this.queue.stopSignal,
      );
    } catch (error) {
      if (!(error instanceof WebhookUrlNotAllowed)) throw error;
      return {
        delivered: false,
        statusCode: null,
        error: WEBHOOK_URL_NOT_ALLOWED_MESSAGE,
        durationMs: Math.round(performance.now() - started),
        responseExcerpt: null,
      };
    }
  }
}
