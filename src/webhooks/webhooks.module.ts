import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { EventsModule } from '../events/events.module.js';
import { DeliveryQueue } from './delivery-queue.js';
import { WebhookDeliverer } from './webhook-deliverer.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { HostResolver, WebhookUrlRules } from './webhook-url.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhooks: management routes, the delivery queue, the dispatcher and the deliverer (docs/webhooks.md); their
 * loops, the queue's maintenance and the daily prune run in the workers (src/workers/).
 */
@Module({
  imports: [AuditModule, EventsModule],
  controllers: [WebhooksController],
  providers: [
    WebhooksRepository,
    WebhookDeliveriesRepository,
    WebhooksService,
    WebhookUrlRules,
    HostResolver,
    DeliveryQueue,
    WebhookDeliverer,
    WebhookDispatcher,
  ],
  exports: [DeliveryQueue, WebhookDeliverer, WebhookDispatcher],
})
export class WebhooksModule {}
