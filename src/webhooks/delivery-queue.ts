import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import PgBoss from 'pg-boss';
import { DataSource } from 'typeorm';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { withAdvisoryLock } from '../database/database.js';
import { jobDbOf } from '../database/pg-boss-db.js';
import { type Transaction } from '../database/transactions.js';
import { type OutgoingEvent, safeText } from './webhook-sender.js';
import {
  JOB_WEBHOOK_COLUMNS,
  jobWebhookJoin,
  type JobWebhookRow,
  type WebhookRow,
  webhookOfJob,
} from './webhooks.repository.js';

const DELIVERY_QUEUE = 'webhook-delivery';
/** pg-boss's tables live in a schema of their own, beside the service's. */
const SCHEMA = 'pgboss';
/** Jobs in hand per replica (their attempt in flight, or its record waiting to be written), all webhooks together. */
const IN_FLIGHT = 128;
/**
 * Attempts in flight per replica for one webhook: a receiver that hangs or trickles holds at most this many,
 * and every other webhook's jobs are still taken (docs/webhooks.md, "Isolation").
 */
const IN_FLIGHT_PER_WEBHOOK = 8;
/** An idle replica looks for due jobs this often (new jobs and retries due soon wake it sooner). */
const POLL_MS = 1000;
/** Fetches start at least this far apart, so attempts ending one by one are refilled together. */
const FETCH_GAP_MS = 5;
/**
 * How long a delivery job stays active before pg-boss takes its replica for dead and hands it to another
 * replica, which makes the attempt again: the attempt's deadline (WEBHOOK_TIMEOUT_MS), then its record after
 * the group recorded before it — for each of the two groups, a pooled connection (DB_CONNECT_TIMEOUT_MS) and
 * the statement that records a group's delivered attempts (DB_QUERY_TIMEOUT_MS, the client's bound on one
 * statement) — and a second of slack. A group of failed attempts is several statements per attempt and can take
 * longer on a slow database; docs/webhooks.md ("Crash") says what then happens.
 */
export function jobExpirySeconds(
  config: Pick<AppConfig, 'dbConnectTimeoutMs' | 'dbQueryTimeoutMs'> & {
    webhooks: Pick<AppConfig['webhooks'], 'timeoutMs'>;
  },
): number {
  const recordMs = 2 * (config.dbConnectTimeoutMs + config.dbQueryTimeoutMs);
  return Math.ceil((config.webhooks.timeoutMs + recordMs) / 1000) + 1;
}
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
  /**
   * The job's webhook as the statement that took the job read it (null: deleted); undefined when the job did
   * not come with it, and the handler reads it itself.
   */
  webhook?: WebhookRow | null;
}

/**
 * What the loop gives a job's handler besides the job: `attemptEnded()` frees the job's slot of its webhook as
 * soon as the attempt (the receiver's answer, or its failure) is over, before its record is written; the job
 * keeps its place among the replica's {@link IN_FLIGHT} until the handler ends.
 */
export type JobHandler = (job: QueuedJob, attemptEnded: () => void) => Promise<unknown>;

/**
 * The CTE body that completes the delivery jobs whose ids are the uuid array `ids` (a parameter), as pg-boss's
 * own `complete` does (state, time, an empty output), for a statement that records their attempts with it.
 */
export const completeJobsSql = (ids: string) => `UPDATE ${SCHEMA}.job
         SET completed_on = now(), state = 'completed', output = '{}'::jsonb
         WHERE name = '${DELIVERY_QUEUE}' AND id = ANY (${ids}::uuid[]) AND state = 'active'`;

/**
 * The deliveries' job queue: pg-boss 10 on the service's PostgreSQL (docs/decisions.md), worked by a loop of our
 * own. Jobs are taken one by one as slots free up (at most {@link IN_FLIGHT} per replica, and
 * {@link IN_FLIGHT_PER_WEBHOOK} per webhook, `FOR UPDATE SKIP LOCKED`: one replica per job), and each job ends on
 * its own: no attempt waits for another's receiver, and a webhook whose attempts fill its slots leaves the others'
 * jobs to be taken. A job whose replica dies stays active until it expires (the attempt's deadline plus a
 * margin), and pg-boss's maintenance then hands it to another replica. pg-boss's own `work()` is not used: it
 * runs a batch as one, and completes or fails it with promises nobody awaits (a failure there was an unhandled
 * rejection that ended the process). The loop ({@link work}) and the maintenance ({@link maintain}) are started
 * by the workers only (src/workers/webhook-delivery-workers.ts); the queue itself starts neither.
 */
@Injectable()
export class DeliveryQueue implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhookQueue');
  private readonly boss: PgBoss;
  private readonly expireInSeconds: number;
  /** How often the workers run {@link maintain}: expired jobs are noticed within one interval. */
  readonly maintenanceIntervalSeconds: number;
  private readonly stopping = new AbortController();
  /** Attempts in flight on this replica, by webhook id. */
  private readonly busy = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private loop: Promise<void> | undefined;
  private woken = false;
  private wakeLoop: (() => void) | undefined;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    this.expireInSeconds = jobExpirySeconds(config);
    this.maintenanceIntervalSeconds = Math.min(this.expireInSeconds, 60);
    this.boss = new PgBoss({
      // The database the service settled on at boot (DATABASE_URL, or the embedded one).
      connectionString: (dataSource.options as { url?: string }).url,
      application_name: 'module-admin-service-jobs',
      schema: SCHEMA,
      max: 3,
      // No cron schedules: the clock monitor they need is off.
      schedule: false,
      // Maintenance (expiring and archiving jobs) is background work: the workers run it ({@link maintain}).
      supervise: false,
      // Archived jobs hold their events: never kept longer than the events (the daily prune removes them sooner).
      deleteAfterDays: config.eventRetentionDays > 0 ? Math.min(7, config.eventRetentionDays) : 7,
    });
    // pg-boss reports its own background failures (maintenance, its pool) here; they never end the process.
    this.boss.on('error', (error: Error) => this.logger.warn('Job queue error', error));
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
        // Per job, so a queue created by an older version (with a shorter expiry) gets the current one.
        expireInSeconds: this.expireInSeconds,
        ...(startAfter ? { startAfter: startAfter.toISOString() } : {}),
      })),
      { db: jobDbOf(transaction) },
    );
  }

  /** Marks a job done in `transaction`, together with the attempt it recorded. */
  async complete(id: string, transaction: Transaction): Promise<void> {
    await this.boss.complete(DELIVERY_QUEUE, id, {}, { db: jobDbOf(transaction) });
  }

  /**
   * Hands a job back unfinished (shutdown, or its attempt could not be recorded): pg-boss runs it again soon,
   * on any replica, with the same attempt number. Never throws: a job not handed back expires instead.
   */
  async release(id: string, reason: string): Promise<void> {
    try {
      await this.boss.fail(DELIVERY_QUEUE, id, { reason: safeText(reason) });
    } catch (error) {
      this.logger.warn(`Could not hand back webhook job ${id}`, error);
    }
  }

  /**
   * Starts this replica's loop: every job taken is passed to `handler` at once, on its own. The handler should
   * not throw; if it does, the job is handed back and the loop goes on.
   */
  work(handler: JobHandler): void {
    this.loop ??= this.run(handler);
  }

  /**
   * One round of pg-boss's maintenance (expiring the jobs of dead replicas, archiving and dropping finished ones),
   * unless a replica ran one within {@link maintenanceIntervalSeconds}: what pg-boss's own supervisor does every
   * interval, through the same time stamp in its `version` table, so it runs on one replica at a time.
   */
  async maintain(): Promise<void> {
    const { rows } = await this.boss.getDb().executeSql(
      `UPDATE ${SCHEMA}.version SET maintained_on = now()
       WHERE EXTRACT(EPOCH FROM (now() - COALESCE(maintained_on, now() - interval '1 week'))) > $1
       RETURNING true`,
      [this.maintenanceIntervalSeconds],
    );
    if (rows.length === 1) await this.boss.maintain();
  }

  /** Wakes this replica's loop (new jobs were just committed, a retry is due, a slot freed up). */
  wake(): void {
    this.woken = true;
    this.wakeLoop?.();
  }

  private async run(handler: JobHandler): Promise<void> {
    while (!this.stopping.signal.aborted) {
      const started = Date.now();
      this.woken = false;
      let more = false;
      try {
        more = await this.fill(handler);
      } catch (error) {
        this.logger.warn('Taking webhook jobs failed', error);
      }
      if (!more && !this.woken) await this.pause(POLL_MS);
      await this.pause(FETCH_GAP_MS - (Date.now() - started), true);
    }
  }

  /** Takes what the free slots allow and starts each job; true when a full take suggests more are waiting. */
  private async fill(handler: JobHandler): Promise<boolean> {
    const free = IN_FLIGHT - this.running.size;
    if (free <= 0) return false;
    const full = [...this.busy].filter(([, n]) => n >= IN_FLIGHT_PER_WEBHOOK).map(([id]) => id);
    const jobs = await this.take(free, full);
    for (const job of jobs) this.start(job, handler);
    return jobs.length === free;
  }

  private start(job: QueuedJob, handler: JobHandler): void {
    const webhook = job.data.webhookId;
    this.busy.set(webhook, (this.busy.get(webhook) ?? 0) + 1);
    let slotHeld = true;
    // The webhook's slot: freed when the attempt ends (its record is written with others afterwards), or when
    // the handler ends, whichever comes first.
    const attemptEnded = () => {
      if (!slotHeld) return;
      slotHeld = false;
      const left = (this.busy.get(webhook) ?? 1) - 1;
      if (left <= 0) this.busy.delete(webhook);
      else this.busy.set(webhook, left);
      this.wake();
    };
    const done: Promise<void> = (async () => {
      try {
        await handler(job, attemptEnded);
      } catch (error) {
        this.logger.warn(`Webhook job ${job.id} failed`, error);
        await this.release(job.id, 'The attempt could not be completed');
      }
    })().finally(() => {
      this.running.delete(done);
      attemptEnded();
      this.wake();
    });
    this.running.add(done);
  }

  /**
   * pg-boss's fetch, with two rules of ours: none of the webhooks in `full` (their slots are taken), and no
   * webhook more jobs than its free slots. The same state change as pg-boss's own fetch (active, started,
   * retry count), so its expiry and retries work unchanged.
   */
  private async take(limit: number, full: string[]): Promise<QueuedJob[]> {
    const inFlight = Object.fromEntries(this.busy);
    const result = await this.takeQuery(
      // The candidates are read without a lock, and only the jobs taken are locked: locking every candidate
      // (as many as the free slots, 120 with one busy webhook) wrote a row lock on each of them for one job.
      //
      // Due jobs in the order they became due (start_after; jobs of one dispatch round, with the same start_after
      // and created_on, in the order they were inserted), the order of pg-boss's fetch index (name, start_after):
      // the scan stops at the limit. pg-boss's own order (priority DESC, created_on, id; no job here has a
      // priority, and the ids of a round are random) sorted every due job for each take, a cost that grew with
      // the backlog.
      `WITH next AS (
         SELECT id, data->>'webhookId' AS webhook_id, row_number() OVER () AS k
         FROM (
           SELECT id, data FROM ${SCHEMA}.job
           WHERE name = $1 AND state < 'active' AND start_after < now()
             AND NOT (data->>'webhookId' = ANY ($3::text[]))
           ORDER BY start_after
           LIMIT $2
         ) due
       ),
       ranked AS (
         SELECT id, webhook_id, row_number() OVER (PARTITION BY webhook_id ORDER BY k) AS n
         FROM next
       ),
       chosen AS (
         SELECT j.id FROM ${SCHEMA}.job j
         JOIN ranked ON j.id = ranked.id
         WHERE j.name = $1 AND j.state < 'active'
           AND ranked.n <= $4::int - coalesce(($5::jsonb ->> ranked.webhook_id)::int, 0)
         FOR UPDATE OF j SKIP LOCKED
       ),
       taken AS (
         UPDATE ${SCHEMA}.job j SET
           state = 'active',
           started_on = now(),
           retry_count = CASE WHEN j.started_on IS NOT NULL THEN j.retry_count + 1 ELSE j.retry_count END
         FROM chosen
         WHERE j.name = $1 AND j.id = chosen.id
         RETURNING j.id, j.data
       )
       -- Each job with its webhook's row, read by this statement: no statement of its own per take.
       SELECT t.id, t.data, ${JOB_WEBHOOK_COLUMNS}
       FROM taken t ${jobWebhookJoin('t')}`,
      [DELIVERY_QUEUE, limit, full, IN_FLIGHT_PER_WEBHOOK, JSON.stringify(inFlight)],
    );
    return (result.rows as (JobWebhookRow & { id: string; data: DeliveryJob })[]).map((row) => ({
      id: row.id,
      data: row.data,
      webhook: webhookOfJob(row),
    }));
  }

  /**
   * The take on pg-boss's pool as a named prepared statement: each connection plans it once (planning it cost
   * as much as running it, every take).
   */
  private takeQuery(text: string, values: unknown[]): Promise<{ rows: unknown[] }> {
    const pool = (this.boss.getDb() as { pool?: pg.Pool }).pool;
    if (pool === undefined) return this.boss.getDb().executeSql(text, values);
    return pool.query({ name: 'mas_webhook_take', text, values });
  }

  /** Until `ms` have passed, the loop is woken (unless `sleepThrough`), or the service stops. */
  private async pause(ms: number, sleepThrough = false): Promise<void> {
    if (ms <= 0 || this.stopping.signal.aborted) return;
    const signal = this.stopping.signal;
    await new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      if (!sleepThrough) this.wakeLoop = finish;
      signal.addEventListener('abort', finish, { once: true });
    });
    this.wakeLoop = undefined;
  }

  /**
   * Deletes up to `limit` delivery jobs of pg-boss's `table` (`job`: waiting, active, or completed and not yet
   * archived; `archive`: what its maintenance moved there) whose event is older than `cutoff`, in `transaction`;
   * how many it deleted. A job's payload is a copy of its event (a user's email, say), so it goes with the event's
   * retention, not pg-boss's own (docs/webhooks.md, "Retention").
   */
  async pruneJobsBefore(
    table: 'job' | 'archive',
    cutoff: Date,
    limit: number,
    transaction: Transaction,
  ): Promise<number> {
    const [, deleted] = await transaction.query<[unknown[], number]>(
      `DELETE FROM ${SCHEMA}.${table} WHERE name = $1 AND id IN (
         SELECT id FROM ${SCHEMA}.${table}
         WHERE name = $1 AND (data->'event'->>'at')::timestamptz < $2
         LIMIT $3
       )`,
      [DELIVERY_QUEUE, cutoff, limit],
    );
    return deleted;
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
    await this.loop;
    // The interrupted attempts hand their jobs back, which pg-boss retries later (on any replica).
    await Promise.all(this.running);
    await this.boss.stop({ graceful: true, wait: true, timeout: this.expireInSeconds * 1000 });
  }
}
