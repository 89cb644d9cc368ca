import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import {
  AdminOnly,
  type AuthUser,
  CurrentUser,
  IntegrationTokens,
  ResponseMessage,
} from '../core/decorators.js';
import { type JsonText } from '../core/json-text.js';
import { ApiErrors, ApiOk, schema } from '../openapi/openapi.js';
import { ChangeEventSchema, CURSOR_EXAMPLE } from './change-event.schemas.js';
import { type Query as QueryParams } from '../core/query.js';
import { readFeedParams } from './feed-params.js';
import { CHANGE_EVENT_TYPES, INVALID_EVENT_TYPE_MESSAGE } from './change-event-types.js';
import {
  CURSOR_EXPIRED_MESSAGE,
  FEED_BUSY_MESSAGE,
  INTEGRATION_TOKEN_MAX_WAITING,
  INVALID_CURSOR_MESSAGE,
  TOKEN_WAITING_MESSAGE,
} from './change-event.errors.js';
import { type FeedAnswer, ChangeEventsService } from './change-events.service.js';
import { FEED_LIMIT_DEFAULT, FEED_LIMIT_MAX, FEED_WAIT_MAX_SECONDS } from './feed-params.js';

const FeedSchema = schema('ChangeEventFeed', {
  type: 'object',
  required: ['events', 'next'],
  additionalProperties: false,
  properties: {
    events: { type: 'array', items: ChangeEventSchema },
    next: {
      type: 'string',
      description:
        'Pass as `after` next time: the last event served, or the same `after` when nothing was new.',
      example: CURSOR_EXAMPLE,
    },
  },
});

/** docs/api.md §12 and docs/events.md: the change event feed. */
@ApiTags('Events')
@AdminOnly()
@Controller('events')
export class ChangeEventsController {
  constructor(private readonly changeEvents: ChangeEventsService) {}

  @Get()
  // An LMS reads the feed with an integration token of scope `events` (docs/api.md §14).
  @IntegrationTokens({ scope: 'events' })
  @ResponseMessage('Events retrieved successfully')
  @ApiOperation({
    summary: 'Follow every change to modules and users, in a fixed order, with a cursor',
    description:
      'A reader that always passes the last `next` as `after` sees every event exactly once, in a fixed order, ' +
      'even with concurrent writers on several replicas. With `wait`, a request that finds nothing new is held ' +
      'until an event arrives or the time passes. An `after` older than the retention window is 410. One ' +
      `integration token holds at most ${INTEGRATION_TOKEN_MAX_WAITING} waiting requests per replica (429 beyond).`,
  })
  @ApiQuery({
    name: 'after',
    required: false,
    description: 'A cursor (`next` or an event `id`); absent: from the oldest kept event.',
    schema: { type: 'string', maxLength: 64, example: CURSOR_EXAMPLE },
  })
  @ApiQuery({
    name: 'types',
    required: false,
    description: `A comma-separated list of: ${CHANGE_EVENT_TYPES.join(', ')}. Absent: every type.`,
    schema: { type: 'string', example: 'module.created,module.deleted' },
  })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: `At most this many events (1..${FEED_LIMIT_MAX}; out-of-range values are clamped).`,
    schema: { type: 'integer', minimum: 1, maximum: FEED_LIMIT_MAX, default: FEED_LIMIT_DEFAULT },
  })
  @ApiQuery({
    name: 'wait',
    required: false,
    description: `Seconds to hold the request when nothing is new (0..${FEED_WAIT_MAX_SECONDS}; clamped).`,
    schema: { type: 'integer', minimum: 0, maximum: FEED_WAIT_MAX_SECONDS, default: 0 },
  })
  @ApiOk(200, 'Events retrieved successfully', FeedSchema)
  @ApiErrors({
    400: [
      INVALID_CURSOR_MESSAGE,
      INVALID_EVENT_TYPE_MESSAGE,
      'limit must be an integer',
      'wait must be an integer',
    ],
    410: [CURSOR_EXPIRED_MESSAGE],
    429: [TOKEN_WAITING_MESSAGE],
    503: [FEED_BUSY_MESSAGE],
  })
  feed(@Query() query: QueryParams, @CurrentUser() caller: AuthUser): Promise<JsonText<FeedAnswer>> {
    return this.changeEvents.feed(readFeedParams(query), caller.integration?.tokenId ?? null);
  }
}
