import { Module } from '@nestjs/common';
import { ChangeEventNotifications } from './change-event-notifications.js';
import { ChangeEventsController } from './change-events.controller.js';
import { ChangeEventsRepository } from './change-events.repository.js';
import { ChangeFeedRepository } from './change-feed.repository.js';
import { ChangeEventsService } from './change-events.service.js';

/**
 * Change events (docs/events.md): the outbox features write in their transactions, and the feed. Features
 * import it to record their changes; it imports no feature.
 */
@Module({
  controllers: [ChangeEventsController],
  providers: [ChangeEventsRepository, ChangeFeedRepository, ChangeEventNotifications, ChangeEventsService],
  exports: [ChangeEventsService, ChangeEventsRepository, ChangeFeedRepository, ChangeEventNotifications],
})
export class EventsModule {}
