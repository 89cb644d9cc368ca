import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { CourseModulesModule } from '../course-modules/course-modules.module.js';
import { EventsModule } from '../events/events.module.js';
import { IdempotencyModule } from '../idempotency/idempotency.module.js';
import { UsersModule } from '../users/users.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { MembershipSweepTimer } from './membership-sweep-timer.js';
import { RetentionPrunes } from './retention-prunes.js';
import { StartUpSweeps } from './start-up-sweeps.js';
import { WebhookDeliveryWorkers } from './webhook-delivery-workers.js';
import { WebhookDispatchLoop } from './webhook-dispatch-loop.js';

/**
 * The service's background work (docs/architecture.md, "Background work"): every timer and loop that runs a
 * feature's one-pass method beside the requests. The features hold the passes and start nothing themselves;
 * AppModule.forRoot imports this module only when `config.backgroundWorkers` is true (the service always; a test
 * only when it asks), so whatever is not here never runs in a test by accident.
 */
@Module({
  imports: [AuditModule, EventsModule, IdempotencyModule, UsersModule, CourseModulesModule, WebhooksModule],
  providers: [
    StartUpSweeps,
    RetentionPrunes,
    MembershipSweepTimer,
    WebhookDispatchLoop,
    WebhookDeliveryWorkers,
  ],
})
export class WorkersModule {}
