import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import PgBoss from 'pg-boss';
import { DataSource } from 'typeorm';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { withAdvisoryLock } from '../database/database.js';
import { jobDbOf } from '../database/pg-boss-db.js';
import { type Transaction } from '../database/transactions.js';
import { type OutgoingEvent } from './webhook-sender.js';

const DELIVERY_QUEUE = 'webhook-delivery';
/** pg-boss's tables live in a schema of their own, beside the service's. */
const SCHEMA = 'pgboss';
/** Workers per replica, each taking up to BATCH_SIZE jobs at a time and attempting them concurrently. */
const WORKERS = 2;
const BATCH_SIZE = 25;
/** Arbitrary, fixed (beside the migrations' and the first administrator's): replicas create the queue in turn. */
const QUEUE_SETUP_LOCK = 7_240_002;

/** One attempt to make: the event, for which webhook, and which attempt it is. */
export interface DeliveryJob {
  webhookId: string;
  event: OutgoingEvent;
  /** 1 for the first attempt. */
  attempt: number;
  /** When the first attempt was made or scheduled (RFC 3339): the 3-day window counts from here. */
  firstAt: string;
}

export interface QueuedJob {
  id: string;
  data: DeliveryJob;
}

/**
 * The deliveries' job queue: pg-boss 10 on the service's PostgreSQL (docs/decisions.md). A job is fetched by one
 * replica at a time (`FOR UPDATE SKIP LOCKED`); one whose replica dies stays active until it expires (the
 * attempt's timeout plus a margin), and pg-boss's maintenance then hands it to another replica.
 */
@Injectable()
export class DeliveryQueue implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhookQueue');
  private readonly boss: PgBoss;
  private readonly workerIds: string[] = [];
  private readonly expireInSeconds: number;
  private readonly stopping = new AbortController();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    this.expireInSeconds = Math.ceil(config.webhooks.timeoutMs / 1000) + 5;
    this.boss = new PgBoss({
      // The database the service settled on at boot (DATABASE_URL, or the embedded one).
      connectionString: (dataSource.options as { url?: string }).url,
      application_name: 'module-admin-service-jobs',
      schema: SCHEMA,
      max: 3,
      // No cron schedules: the clock monitor they need is off.
      schedule: false,
      // Maintenance (expiring and archiving jobs) is background work: off where the workers are (tests).
      supervise: config.backgroundWorkers,
      // Expired jobs are noticed within one interval; the maintenance runs on one replica at a time.
      maintenanceIntervalSeconds: Math.min(this.expireInSeconds, 60),
    });
    this.boss.on('error', (error: Error) => this.logger.warn(`Job queue: ${error.message}`));
  }

  async onModuleInit(): Promise<void> {
    await this.boss.start();
    // pg-boss creates a queue's table with DDL that locks its list of queues, which a second replica creating
    // the same queue holds too: two replicas starting together on a new database deadlocked, and one of them
    // failed to start. Under an advisory lock they take turns, and the second finds the queue there.
    await withAdvisoryLock(this.dataSource, QUEUE_SETUP_LOCK, () =>
      // Our own retries are new jobs (the schedule is ours); pg-boss's retries only rerun an attempt that did
      // not finish (its replica died, or recording it failed).
      this.boss.createQueue(DELIVERY_QUEUE, {
        name: DELIVERY_QUEUE,
        expireInSeconds: this.expireInSeconds,
        retryLimit: 50,
        retryDelay: 1,
        retentionMinutes: 7 * 24 * 60,
      }),
    );
  }

  /** Adds jobs in `transaction`: they exist once it commits, and never if it rolls back. */
  async enqueue(
    jobs: readonly DeliveryJob[],
    startAfter: Date | null,
    transaction: Transaction,
  ): Promise<void> {
    if (jobs.length === 0) return;
    await this.boss.insert(
      jobs.map((data) => ({
        name: DELIVERY_QUEUE,
        data,
        ...(startAfter ? { startAfter: startAfter.toISOString() } : {}),
      })),
      { db: jobDbOf(transaction) },
    );
  }

  /** Marks a job done in `transaction`, together with the attempt it recorded. */
  async complete(id: string, transaction: Transaction): Promise<void> {
    await this.boss.complete(DELIVERY_QUEUE, id, {}, { db: jobDbOf(transaction) });
  }

  /** Starts this replica's workers. */
  async work(handler: (jobs: QueuedJob[]) => Promise<void>): Promise<void> {
    for (let i = 0; i < WORKERS; i++) {
      let id = '';
      id = await this.boss.work<DeliveryJob>(
        DELIVERY_QUEUE,
        { batchSize: BATCH_SIZE, pollingIntervalSeconds: 1 },
        async (jobs) => {
          await handler(jobs.map((job) => ({ id: job.id, data: job.data })));
          // A full batch: more are probably waiting, so fetch again without the polling pause.
          if (jobs.length === BATCH_SIZE) this.boss.notifyWorker(id);
        },
      );
      this.workerIds.push(id);
    }
  }

  /** Wakes this replica's idle workers (new jobs were just committed). */
  wake(): void {
    for (const id of this.workerIds) this.boss.notifyWorker(id);
  }

  /** The time of the oldest event still waiting for a delivery (a job not yet completed or given up). */
  async oldestPending(): Promise<Date | null> {
    const [row] = await this.boss
      .getDb()
      .executeSql(
        `SELECT min((data->'event'->>'at')::timestamptz) AS at FROM ${SCHEMA}.job
         WHERE name = $1 AND state < 'completed'`,
        [DELIVERY_QUEUE],
      )
      .then((result) => result.rows as { at: Date | null }[]);
    return row?.at ?? null;
  }

  /** Aborted when the service stops: attempts in progress end at once and their jobs are retried later. */
  get stopSignal(): AbortSignal {
    return this.stopping.signal;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    // The aborted batches fail their jobs, which pg-boss retries later (on any replica) with the same attempt.
    await this.boss.stop({ graceful: true, wait: true, timeout: this.expireInSeconds * 1000 });
  }
}
