import { Module } from '@nestjs/common';
import { ChangeEventsRepository } from './change-events.repository.js';

/**
 * Change events (docs/events.md): the outbox features write in their transactions, and the feed. Features
 * import it to record their changes; it imports no feature.
 */
@Module({
  providers: [ChangeEventsRepository],
  exports: [ChangeEventsRepository],
})
export class EventsModule {}
