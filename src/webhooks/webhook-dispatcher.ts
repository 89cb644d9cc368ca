import { Injectable } from '@nestjs/common';
import { Transactions } from '../database/transactions.js';
import { ChangeFeedRepository, type StoredChangeEvent } from '../events/change-feed.repository.js';
import { encodeCursor } from '../events/feed-cursor.js';
import { type DeliveryJob, DeliveryQueue } from './delivery-queue.js';
import { takes } from './webhook-types.js';
import { WebhooksRepository } from './webhooks.repository.js';

/** Events read and turned into jobs per transaction (a round that fills it is followed by another at once). */
export const DISPATCH_BATCH = 500;

export interface DispatchResult {
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
 * enqueued once whatever crashes when (docs/webhooks.md). Its rounds run on every replica, never on a request's
 * path, in a loop of the workers (src/workers/webhook-dispatch-loop.ts).
 */
@Injectable()
export class WebhookDispatcher {
  private backlog: Date | null = null;

  constructor(
    private readonly events: ChangeFeedRepository,
    private readonly webhooks: WebhooksRepository,
    private readonly queue: DeliveryQueue,
    private readonly transactions: Transactions,
  ) {}

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
    const skip = await this.webhooks.skipUnwantedEvents(DISPATCH_BATCH);
    if (!skip.wanted) {
      // A busy round says nothing of the backlog: the replica that moved the position knows it.
      if (!skip.busy) this.backlog = skip.skipped === DISPATCH_BATCH ? skip.lastAt : null;
      return { dispatched: skip.skipped, jobs: 0, busy: skip.busy, pending: skip.pending };
    }
    return this.transactions.run(async (transaction) => {
      const position = await this.webhooks.lockDispatchPosition(transaction);
      if (position === undefined) return { dispatched: 0, jobs: 0, busy: true, pending: false };
      const page = await this.events.readPage(position, null, DISPATCH_BATCH);
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
      this.backlog = page.events.length === DISPATCH_BATCH ? last.at : null;
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
