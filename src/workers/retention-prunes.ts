import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { ChangeEventsService } from '../events/change-events.service.js';
import { IdempotencyPrune } from '../idempotency/idempotency.module.js';
import { WebhookDeliverer } from '../webhooks/webhook-deliverer.js';

const DAY_MS = 86_400_000;

/**
 * Runs `prune` at once and then daily, logging what it removed (`what`, e.g. "audit events") and any failure
 * as a warning; the timer is unref'd, so it never keeps the process alive. Returns the function that stops it.
 */
function pruneDaily(
  prune: () => Promise<number>,
  what: string,
  logger: { log(message: string): void; warn(message: string, error: unknown): void },
): () => void {
  const run = () =>
    prune()
      .then((pruned) => {
        if (pruned > 0) logger.log(`Pruned ${pruned} ${what} past the retention period`);
      })
      .catch((error: unknown) => logger.warn(`Could not prune ${what}`, error));
  void run();
  const timer = setInterval(() => void run(), DAY_MS).unref();
  return () => clearInterval(timer);
}

/**
 * The daily retention prunes, each at start and then every day: audit events (AUDIT_RETENTION_DAYS), change
 * events and the webhook deliveries' attempts and jobs that copy them (EVENT_RETENTION_DAYS), idempotency keys
 * (24 hours). A retention of 0 days keeps everything: its prune is not started. Each pass is its service's own
 * `prune()`; their log lines keep the service's name.
 */
@Injectable()
export class RetentionPrunes implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly stops: (() => void)[] = [];

  constructor(
    private readonly audit: AuditService,
    private readonly changeEvents: ChangeEventsService,
    private readonly idempotencyKeys: IdempotencyPrune,
    private readonly deliveries: WebhookDeliverer,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const { auditRetentionDays, eventRetentionDays } = this.config;
    const prunes = [
      [auditRetentionDays, () => this.audit.prune(), 'audit events', AuditService.name],
      [eventRetentionDays, () => this.changeEvents.prune(), 'change events', ChangeEventsService.name],
      [1, () => this.idempotencyKeys.prune(), 'idempotency keys', 'Idempotency'],
      [
        eventRetentionDays,
        () => this.deliveries.prune(),
        'webhook delivery attempts and jobs',
        'WebhookDelivery',
      ],
    ] as const;
    for (const [days, prune, what, logger] of prunes) {
      if (days > 0) this.stops.push(pruneDaily(prune, what, new Logger(logger)));
    }
  }

  onApplicationShutdown(): void {
    for (const stop of this.stops) stop();
  }
}
