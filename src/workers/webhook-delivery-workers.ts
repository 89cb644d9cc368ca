import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { DeliveryQueue } from '../webhooks/delivery-queue.js';
import { WebhookDeliverer } from '../webhooks/webhook-deliverer.js';

/**
 * The delivery queue's workers: this replica's loop taking due jobs, each handed to the deliverer
 * ({@link WebhookDeliverer.deliver}), and pg-boss's maintenance every interval ({@link DeliveryQueue.maintain}).
 * Shutdown stops the maintenance here; the queue's own hook then stops its loop, waits for the attempts in hand
 * and stops pg-boss.
 */
@Injectable()
export class WebhookDeliveryWorkers implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhookQueue');
  private maintenance: NodeJS.Timeout | undefined;
  private maintaining = false;

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly deliverer: WebhookDeliverer,
  ) {}

  onApplicationBootstrap(): void {
    // Cleared at shutdown; unref'd like the other workers' timers, so it never keeps a process alive on its own.
    this.maintenance = setInterval(
      () => void this.maintain(),
      this.queue.maintenanceIntervalSeconds * 1000,
    ).unref();
    this.queue.work((job, attemptEnded) => this.deliverer.deliver(job, attemptEnded));
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.maintenance);
  }

  /** One round, unless the last one is still running; a failure is logged (as pg-boss's own) and the next tries again. */
  private async maintain(): Promise<void> {
    if (this.maintaining) return;
    this.maintaining = true;
    try {
      await this.queue.maintain();
    } catch (error) {
      this.logger.warn('Job queue error', error);
    } finally {
      this.maintaining = false;
    }
  }
}
