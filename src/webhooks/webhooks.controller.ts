import { ApiIfMatch, ApiSingleRead } from '../openapi/openapi.js';
import { IfMatch, Preconditions } from '../core/preconditions.js';
import { SingleRead } from '../core/validators.js';
import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { type RequestContext } from '../audit/audit-actions.js';
import { RequestCtx } from '../audit/request-context.decorator.js';
import { AdminOnly, ResponseMessage } from '../core/decorators.js';
import { ApiErrors, ApiOk, ApiPagingQuery } from '../openapi/openapi.js';
import { PAGING_MESSAGES, type Query as QueryParams, readPaging } from '../core/query.js';
import { CreateWebhookDto } from './dto/create-webhook.dto.js';
import { UpdateWebhookDto } from './dto/update-webhook.dto.js';
import { DESCRIPTION_MESSAGE, ENABLED_MESSAGE, TYPES_MESSAGE, URL_MESSAGE } from './webhook-body-rules.js';
import { WebhookId } from './webhook-id.param.js';
import {
  CreatedWebhookSchema,
  DeliveryListSchema,
  TestEventSchema,
  WebhookListSchema,
  WebhookSchema,
} from './webhook.schemas.js';
import { WEBHOOK_NOT_FOUND_MESSAGE, WEBHOOK_URL_NOT_ALLOWED_MESSAGE } from './webhook.errors.js';
import { type WebhookResponse } from './webhook.shape.js';
import { type DeliveryPage, type WebhookPage, WebhooksService } from './webhooks.service.js';
import { NOTHING_TO_UPDATE_MESSAGE } from '../core/errors.js';
import { INVALID_EVENT_TYPE_MESSAGE } from '../events/change-event-types.js';

const FIELD_MESSAGES = [URL_MESSAGE, TYPES_MESSAGE, INVALID_EVENT_TYPE_MESSAGE, DESCRIPTION_MESSAGE];
const NOT_FOUND = { 404: [WEBHOOK_NOT_FOUND_MESSAGE] };

/** docs/api.md §12: webhooks, managed by administrators. */
@ApiTags('Webhooks')
@AdminOnly()
@Controller('webhooks')
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly preconditions: Preconditions,
  ) {}

  @Get()
  @ResponseMessage('Webhooks retrieved successfully')
  @ApiOperation({ summary: 'List webhooks, oldest first, paged' })
  @ApiPagingQuery()
  @ApiOk(200, 'Webhooks retrieved successfully', WebhookListSchema)
  @ApiErrors({ 400: [...PAGING_MESSAGES] })
  list(@Query() query: QueryParams): Promise<WebhookPage> {
    return this.webhooks.list(readPaging(query));
  }

  @Post()
  @ResponseMessage('Webhook created')
  @ApiOperation({
    summary: 'Create a webhook',
    description:
      'The answer carries the signing `secret`; it is never shown again. The URL is checked now (scheme, and ' +
      'every address its host resolves to) and again before every delivery.',
  })
  @ApiOk(201, 'Webhook created', CreatedWebhookSchema)
  @ApiErrors({ 400: [...FIELD_MESSAGES, WEBHOOK_URL_NOT_ALLOWED_MESSAGE] })
  create(
    @Body() body: CreateWebhookDto,
    @RequestCtx() context: RequestContext,
  ): Promise<WebhookResponse & { secret: string }> {
    return this.webhooks.create(body, context);
  }

  @Get(':webhook_id')
  @ApiSingleRead()
  @ResponseMessage('Webhook retrieved successfully')
  @ApiOperation({ summary: 'Read a webhook (without its secret)' })
  @ApiOk(200, 'Webhook retrieved successfully', WebhookSchema)
  @ApiErrors(NOT_FOUND)
  get(@WebhookId() id: string): Promise<WebhookResponse> {
    return this.webhooks.get(id);
  }

  @Put(':webhook_id')
  @SingleRead()
  @ApiIfMatch()
  @ResponseMessage('Webhook updated successfully')
  @ApiOperation({
    summary: 'Change any of url, types, description and enabled',
    description: 'Turning a webhook on again clears `failing_since`. The secret cannot be changed.',
  })
  @ApiOk(200, 'Webhook updated successfully', WebhookSchema)
  @ApiErrors({
    400: [NOTHING_TO_UPDATE_MESSAGE, ...FIELD_MESSAGES, ENABLED_MESSAGE, WEBHOOK_URL_NOT_ALLOWED_MESSAGE],
    ...NOT_FOUND,
  })
  async update(
    @WebhookId() id: string,
    @Body() body: UpdateWebhookDto,
    @RequestCtx() context: RequestContext,
    @IfMatch() ifMatch: string | undefined,
  ): Promise<WebhookResponse> {
    return this.webhooks.update(id, body, context, this.preconditions.expect(ifMatch));
  }

  @Delete(':webhook_id')
  @ApiIfMatch()
  @ResponseMessage('Webhook deleted successfully')
  @ApiOperation({ summary: 'Delete a webhook with its delivery log; its pending deliveries are dropped' })
  @ApiOk(200, 'Webhook deleted successfully', null)
  @ApiErrors(NOT_FOUND)
  async remove(
    @WebhookId() id: string,
    @RequestCtx() context: RequestContext,
    @IfMatch() ifMatch: string | undefined,
  ): Promise<null> {
    await this.webhooks.remove(id, context, this.preconditions.expect(ifMatch));
    return null;
  }

  @Post(':webhook_id/test')
  @HttpCode(202)
  @ResponseMessage('Test event queued')
  @ApiOperation({
    summary: 'Send a webhook.test event to this webhook',
    description:
      "Queued, not sent on this request: the delivery log shows the attempts. Sent whatever the webhook's " +
      'types, and also to a disabled webhook (to check a receiver before turning it on again).',
  })
  @ApiOk(202, 'Test event queued', TestEventSchema)
  @ApiErrors(NOT_FOUND)
  sendTest(@WebhookId() id: string): Promise<{ event_id: string; type: string }> {
    return this.webhooks.sendTest(id);
  }

  @Get(':webhook_id/deliveries')
  @ResponseMessage('Deliveries retrieved successfully')
  @ApiOperation({
    summary: 'The delivery log: attempts, newest first, paged',
    description: `Attempts are kept EVENT_RETENTION_DAYS (default 30) and removed with the webhook.`,
  })
  @ApiPagingQuery()
  @ApiOk(200, 'Deliveries retrieved successfully', DeliveryListSchema)
  @ApiErrors({ 400: [...PAGING_MESSAGES], ...NOT_FOUND })
  deliveries(@WebhookId() id: string, @Query() query: QueryParams): Promise<DeliveryPage> {
    return this.webhooks.deliveries(id, readPaging(query));
  }
}
