import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Metrics } from '../observability/metrics.js';
import { type Transaction, Transactions } from '../database/transactions.js';
import { completeJobsSql, DeliveryQueue, type QueuedJob } from './delivery-queue.js';
import { RetrySchedule } from './retry-schedule.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { TEST_EVENT_TYPE } from './webhook-types.js';
import { type AttemptResult, post, signedRequest } from './webhook-sender.js';
import { WebhookUrlRules } from './webhook-url.js';
import { HostNotResolved, WebhookUrlNotAllowed, WEBHOOK_URL_NOT_ALLOWED_MESSAGE } from './webhook.errors.js';
import { urlForAudit } from './webhook-audit.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { type WebhookRow, WebhooksRepository } from './webhooks.repository.js';

/** The queue loop's polling interval (DeliveryQueue). */
const POLL_MS = 1000;
const DAY_MS = 86_400_000;
/** Delivery attempts deleted per transaction by the retention prune. */
const PRUNE_BATCH = 10_000;

type DeliveryOutcome = 'delivered' | 'retrying' | 'failed';

interface AttemptEntry {
  job: QueuedJob;
  startedAt: Date;
  result: AttemptResult;
  next: Date | null;
  outcome: DeliveryOutcome;
}

/**
 * Attempts recorded together at most, and recordings at once, per replica. One recorder: attempts that end while
 * it writes are recorded together next (an attempt's slot is free by then, so nothing waits for it but the
 * job's completion). A group takes every attempt waiting (a replica has at most 128 jobs in hand), so an attempt
 * waits for at most the group being written before its own: within the job's expiry margin (delivery-queue.ts).
 */
const RECORD_GROUP = 128;
const RECORDERS = 1;

/**
 * The workers' side: makes one attempt per job, records it, and in the same transaction schedules the next
 * attempt (or gives up), keeps the webhook's failure streak, disables it after 3 days of failures, and
 * completes the job. Never runs on a request's path: the workers (src/workers/webhook-delivery-workers.ts) hand
 * it the queue's jobs and run its daily prune.
 */
@Injectable()
export class WebhookDeliverer implements OnApplicationBootstrap {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly schedule: RetrySchedule;
  private readonly toRecord: {
    entry: AttemptEntry;
    resolve: (fresh: boolean) => void;
    reject: (error: Error) => void;
  }[] = [];
  private recorders = 0;
  private readonly lookups = new Map<
    string,
    { resolve: (row: WebhookRow | null) => void; reject: (error: Error) => void }[]
  >();

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly dispatcher: WebhookDispatcher,
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly rules: WebhookUrlRules,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.schedule = new RetrySchedule(config.webhooks.retryScale);
  }

  onApplicationBootstrap(): void {
    // Read at scrape time on pg-boss's own pool (and the dispatcher's memory), never the request pool.
    this.metrics.reportOldestUndelivered(async () => {
      const times = [await this.queue.oldestPending(), this.dispatcher.backlogSince].filter(
        (at): at is Date => at !== null,
      );
      return times.length === 0 ? null : new Date(Math.min(...times.map((at) => at.getTime())));
    });
  }

  /**
   * Deletes what holds a copy of an event past EVENT_RETENTION_DAYS (the events' own retention; 0 keeps them):
   * delivery attempts older than the window, and delivery jobs (pg-boss's, archived ones too) whose event is.
   * Returns how many rows it deleted.
   */
  async prune(now = new Date()): Promise<number> {
    const days = this.config.eventRetentionDays;
    if (days === 0) return 0;
    const cutoff = new Date(now.getTime() - days * DAY_MS);
    return (
      (await this.pruneInBatches((transaction) =>
        this.deliveries.pruneDeliveriesBefore(cutoff, PRUNE_BATCH, transaction),
      )) +
      (await this.pruneInBatches((transaction) =>
        this.queue.pruneJobsBefore('job', cutoff, PRUNE_BATCH, transaction),
      )) +
      (await this.pruneInBatches((transaction) =>
        this.queue.pruneJobsBefore('archive', cutoff, PRUNE_BATCH, transaction),
      ))
    );
  }

  /**
   * In batches, each a transaction of its own under the long bound: a large backlog (a first prune, a retention
   * shortened) shrinks batch by batch instead of failing whole at the interactive bound.
   */
  private async pruneInBatches(batch: (transaction: Transaction) => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.transactions.runLong(batch);
      total += deleted;
      if (deleted < PRUNE_BATCH || this.queue.stopSignal.aborted) return total;
    }
  }

  /**
   * One job: its attempt, then one transaction of its own that records it, schedules the retry (or gives up),
   * keeps the webhook's failure streak and completes the job. Jobs run side by side and each ends on its own,
   * so no attempt waits for another webhook's receiver and a recording that fails touches only its own job
   * (handed back, so its attempt is made again later: the at-least-once case). A replica that dies before the
   * commit leaves the job active; pg-boss hands it to another replica once it expires. `attemptEnded` is
   * called once the attempt is over, before its record (the webhook's slot is then free). Never throws.
   */
  async deliver(job: QueuedJob, attemptEnded: () => void = () => undefined): Promise<DeliveryOutcome | null> {
    try {
      // The row the statement that took the job read with it, if it did.
      const webhook = job.webhook !== undefined ? job.webhook : await this.webhookOf(job.data.webhookId);
      // Deleted or turned off meanwhile: its pending deliveries are dropped (a test event still goes out).
      if (!webhook || (!webhook.enabled && job.data.event.type !== TEST_EVENT_TYPE)) {
        await this.transactions.run((transaction) => this.queue.complete(job.id, transaction));
        return null;
      }
      if (await this.heldByBreaker(job, webhook)) return null;
      const startedAt = new Date();
      const result = await this.attempt(webhook.url, webhook.secret, job, startedAt);
      attemptEnded();
      // Cut short by shutdown: nothing is recorded, and pg-boss retries the job (the same attempt) later.
      if (this.queue.stopSignal.aborted) {
        await this.queue.release(job.id, 'Interrupted by shutdown');
        return null;
      }
      const next = result.delivered
        ? null
        : this.schedule.nextAttemptAt(job.data.attempt, new Date(job.data.firstAt), new Date());
      const outcome: DeliveryOutcome = result.delivered ? 'delivered' : next ? 'retrying' : 'failed';
      const entry = { job, startedAt, result, next, outcome };
      let fresh: boolean;
      try {
        fresh = await this.recordSoon(entry);
      } catch (error) {
        // Whatever in the answer made the row fail (nothing should: it is made safe), the attempt is kept
        // without it, in a transaction of its own, rather than made again.
        this.logger.warn(`Recording webhook ${webhook.id}'s attempt failed, kept without the answer`, error);
        const bare = {
          ...result,
          responseExcerpt: null,
          error: result.error === null ? null : 'Not recorded',
        };
        fresh = await this.transactions.run((transaction) =>
          this.record({ ...entry, result: bare }, transaction),
        );
      }
      if (!fresh) return null;
      this.metrics.webhookDelivery(outcome);
      // A retry due before the loop's next poll (the schedule shrunk for tests) wakes it when it is due.
      if (next && next.getTime() - Date.now() < POLL_MS)
        setTimeout(() => this.queue.wake(), Math.max(0, next.getTime() - Date.now())).unref();
      return outcome;
    } catch (error) {
      this.logger.warn(`Webhook delivery job ${job.id} not recorded`, error);
      await this.queue.release(job.id, 'The attempt could not be recorded');
      return null;
    }
  }

  /**
   * The circuit breaker: a webhook failing for 24 hours without a delivered attempt is paused. Its jobs then
   * wait for the next probe round (15 minutes after its latest attempt): such a job is not sent and not
   * recorded, but put back, the same attempt, to start then. A delivered probe ends the failure streak, and
   * with it the pause. A test event is never held. The 3-day disable is unchanged.
   */
  private async heldByBreaker(job: QueuedJob, webhook: WebhookRow): Promise<boolean> {
    const now = new Date();
    if (job.data.event.type === TEST_EVENT_TYPE || !this.schedule.paused(webhook.failing_since, now))
      return false;
    const last = await this.deliveries.lastAttemptAt(String(webhook.id));
    const probeAt = last === null ? now : this.schedule.nextProbeAt(last);
    if (probeAt <= now) return false;
    await this.transactions.run(async (transaction) => {
      await this.queue.complete(job.id, transaction);
      await this.queue.enqueue([job.data], probeAt, transaction);
    });
    if (probeAt.getTime() - Date.now() < POLL_MS)
      setTimeout(() => this.queue.wake(), Math.max(0, probeAt.getTime() - Date.now())).unref();
    return true;
  }

  /** A webhook's row, read with those other jobs ask for at the same moment (one query for them all). */
  private webhookOf(id: string): Promise<WebhookRow | null> {
    return new Promise((resolve, reject) => {
      const waiting = this.lookups.get(id) ?? [];
      waiting.push({ resolve, reject });
      this.lookups.set(id, waiting);
      if (this.lookups.size === 1 && waiting.length === 1) setImmediate(() => void this.lookUpPending());
    });
  }

  private async lookUpPending(): Promise<void> {
    const batch = new Map(this.lookups);
    this.lookups.clear();
    try {
      const rows = await this.webhooks.findByIds([...batch.keys()]);
      const byId = new Map(rows.map((row) => [String(row.id), row]));
      for (const [id, waiting] of batch) for (const { resolve } of waiting) resolve(byId.get(id) ?? null);
    } catch (error) {
      for (const waiting of batch.values()) for (const { reject } of waiting) reject(error as Error);
    }
  }

  /**
   * Records an attempt with the others that ended meanwhile: one transaction for the group (a transaction
   * per attempt made the recording, not the receivers, the bound on throughput), each attempt under a
   * savepoint of its own, so one that fails is rolled back alone and rejected, and the others are kept.
   */
  private recordSoon(entry: AttemptEntry): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.toRecord.push({ entry, resolve, reject });
      void this.recordPending();
    });
  }

  private async recordPending(): Promise<void> {
    if (this.recorders >= RECORDERS) return;
    this.recorders++;
    try {
      while (this.toRecord.length > 0) {
        const group = this.toRecord.splice(0, RECORD_GROUP);
        const each: (boolean | Error | undefined)[] = group.map(() => undefined);
        const oneByOne = async (indexes: number[]) => {
          if (indexes.length === 0) return;
          try {
            await this.transactions.run(async (transaction) => {
              for (const i of indexes) {
                try {
                  each[i] = await this.deliveries.underSavepoint(transaction, () =>
                    this.record(group[i].entry, transaction),
                  );
                } catch (error) {
                  each[i] = error instanceof Error ? error : new Error(String(error));
                }
              }
            });
          } catch (error) {
            for (const i of indexes) each[i] = error instanceof Error ? error : new Error(String(error));
          }
        };
        // The attempts not delivered first: once a delivered attempt of the group is in the log, the group's
        // other attempts are too (as when a group was one transaction).
        await oneByOne([...group.keys()].filter((i) => group[i].entry.outcome !== 'delivered'));
        await this.recordDeliveredTogether(group, each);
        await oneByOne([...group.keys()].filter((i) => each[i] === undefined));
        group.forEach(({ resolve, reject }, i) => {
          const result = each[i]!;
          if (result instanceof Error) reject(result);
          else resolve(result);
        });
      }
    } finally {
      this.recorders--;
    }
  }

  /**
   * The group's delivered attempts, recorded together by one statement, a transaction of its own: their rows,
   * the end of their webhooks' failure streaks and their jobs' completion (a delivered attempt schedules nothing
   * and disables nothing). Sets `each[i]` for those; if the statement fails, it changed nothing and they are
   * left to be recorded one by one, each under a savepoint of its own, so that one attempt's record can still
   * fail only itself.
   */
  private async recordDeliveredTogether(
    group: readonly { entry: AttemptEntry }[],
    each: (boolean | Error | undefined)[],
  ): Promise<void> {
    const delivered = [...group.keys()].filter((i) => group[i].entry.outcome === 'delivered');
    if (delivered.length === 0) return;
    try {
      const fresh = await this.deliveries.recordDelivered(
        delivered.map((i) => deliveryOf(group[i].entry)),
        { cte: completeJobsSql, value: delivered.map((i) => group[i].entry.job.id) },
      );
      delivered.forEach((i, k) => (each[i] = fresh.has(k)));
    } catch (error) {
      this.logger.warn('Recording delivered attempts together failed, one by one instead', error);
    }
  }

  /** Records one attempt and its consequences; false when this attempt was recorded already. */
  private async record(entry: AttemptEntry, transaction: Transaction): Promise<boolean> {
    const { job, result, next } = entry;
    const { webhookId, attempt } = job.data;
    const fresh = await this.deliveries.recordAttempt(deliveryOf(entry), transaction);
    await this.queue.complete(job.id, transaction);
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
          summary: { url: urlForAudit(disabled.url), types: disabled.types, enabled: false },
        },
      );
      this.logger.warn(`Webhook ${disabled.id} disabled: its deliveries have failed for 3 days`);
    }
    return true;
  }

  /**
   * One attempt under one deadline (WEBHOOK_TIMEOUT_MS) covering the DNS lookup, the connection and the answer:
   * fresh DNS answers, checked again, and the connection goes to the address checked.
   */
  private async attempt(url: string, secret: string, job: QueuedJob, now: Date): Promise<AttemptResult> {
    const started = performance.now();
    const { timeoutMs } = this.config.webhooks;
    const deadline = AbortSignal.any([this.queue.stopSignal, AbortSignal.timeout(timeoutMs)]);
    const whyEnded = () =>
      this.queue.stopSignal.aborted ? 'Interrupted by shutdown' : `No answer within ${timeoutMs} ms`;
    const took = () => Math.round(performance.now() - started);
    try {
      const target = await this.rules.check(url, deadline);
      const result = await post(target, signedRequest(secret, job.data.event, now), deadline, whyEnded);
      return { ...result, durationMs: took() };
    } catch (error) {
      const failed = { delivered: false, statusCode: null, responseExcerpt: null, durationMs: took() };
      if (error instanceof HostNotResolved)
        return { ...failed, error: deadline.aborted ? whyEnded() : `Host name not resolved (${error.code})` };
      if (error instanceof WebhookUrlNotAllowed) return { ...failed, error: WEBHOOK_URL_NOT_ALLOWED_MESSAGE };
      throw error;
    }
  }
}

/** The delivery log's row of an attempt. */
function deliveryOf({ job, startedAt, result, next, outcome }: AttemptEntry) {
  return {
    webhook_id: job.data.webhookId,
    event_id: job.data.event.id,
    event_type: job.data.event.type,
    attempt: job.data.attempt,
    at: startedAt,
    outcome,
    status_code: result.statusCode,
    error: result.error,
    duration_ms: result.durationMs,
    response_excerpt: result.responseExcerpt,
    next_retry_at: next,
  };
}
