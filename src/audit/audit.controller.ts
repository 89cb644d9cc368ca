import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { AdminOnly, ResponseMessage } from '../core/decorators.js';
import { type PerField } from '../core/wire-shape.js';
import {
  ApiErrors,
  ApiOk,
  ApiPagingQuery,
  pagedSchema,
  schema,
  type Schema,
  shapeSchema,
} from '../openapi/openapi.js';
import { AUDIT_EVENT_FIELDS, type AuditEventResponse } from './audit-event.shape.js';
import { INVALID_SORT_MESSAGE, PAGING_MESSAGES, type Query as QueryParams } from '../core/query.js';
import { readAuditListParams } from './audit-params.js';
import { AUDIT_ACTIONS, INVALID_AUDIT_ACTION_MESSAGE } from './audit-actions.js';
import { type AuditPage, AuditService } from './audit.service.js';

const AuditEventSchema = schema(
  'AuditEvent',
  shapeSchema(AUDIT_EVENT_FIELDS, {
    id: { type: 'integer', format: 'int64', minimum: 1, example: 42 },
    at: { type: 'string', format: 'date-time', example: '2026-11-21T08:41:00.123Z' },
    actor_id: { type: 'integer', format: 'int64', nullable: true, example: 1 },
    action: { type: 'string', enum: [...AUDIT_ACTIONS], example: 'module.update' },
    target_type: {
      type: 'string',
      enum: ['module', 'user', 'webhook', 'token'],
      nullable: true,
      example: 'module',
    },
    target_ids: { type: 'array', items: { type: 'integer', format: 'int64' }, example: [7] },
    summary: {
      type: 'object',
      additionalProperties: true,
      description: 'What changed; never a password, hash or token.',
      example: { credits: { from: 15, to: 20 } },
    },
    request_id: { type: 'string', nullable: true, example: '0b6c0d1e-3a55-4f7e-9d67-6f0e3c2b9a10' },
    client_ip: { type: 'string', nullable: true, example: '192.0.2.10' },
  } satisfies PerField<AuditEventResponse, Schema>),
);
const AuditListSchema = schema('AuditEventList', pagedSchema('events', AuditEventSchema));

const idQuery = (name: string, description: string) =>
  ApiQuery({ name, required: false, description, schema: { type: 'integer', format: 'int64', minimum: 1 } });
const timeQuery = (name: string, description: string) =>
  ApiQuery({
    name,
    required: false,
    description,
    schema: { type: 'string', format: 'date-time', example: '2026-11-21T00:00:00Z' },
  });

/** docs/api.md §10: the audit trail, read-only. */
@ApiTags('Audit')
@AdminOnly()
@Controller('audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ResponseMessage('Audit events retrieved successfully')
  @ApiOperation({
    summary: 'List audit events, filtered and paged (newest first by default)',
    description:
      'Events are written by every change made through the API, in the same transaction as the change, and ' +
      'cannot be changed or deleted through the API. Filters combine with AND.',
  })
  @idQuery('actor_id', 'Only events by this user.')
  @ApiQuery({
    name: 'action',
    required: false,
    description: `One action or a comma-separated list of: ${AUDIT_ACTIONS.join(', ')}.`,
    schema: { type: 'string', example: 'user.create,user.update' },
  })
  @ApiQuery({
    name: 'target_type',
    required: false,
    description: 'Only events about this kind of resource.',
    schema: { type: 'string', enum: ['module', 'user', 'webhook', 'token'] },
  })
  @idQuery('target_id', 'Only events naming this id among their targets.')
  @timeQuery('from', 'Only events at or after this time (RFC 3339).')
  @timeQuery('to', 'Only events at or before this time (RFC 3339).')
  @ApiPagingQuery()
  @ApiQuery({
    name: 'sort',
    required: false,
    description:
      '`at` (oldest first) or `-at` (newest first, the default); ties are broken by id in the same direction.',
    schema: { type: 'string', enum: ['at', '-at'], example: '-at' },
  })
  @ApiOk(200, 'Audit events retrieved successfully', AuditListSchema)
  @ApiErrors({
    400: [
      ...PAGING_MESSAGES,
      'actor_id must be a positive integer',
      INVALID_AUDIT_ACTION_MESSAGE,
      'target_type must be one of module, user, webhook, token',
      'target_id must be a positive integer',
      'from must be an RFC 3339 timestamp',
      'to must be an RFC 3339 timestamp',
      INVALID_SORT_MESSAGE,
    ],
  })
  list(@Query() query: QueryParams): Promise<AuditPage> {
    return this.audit.list(readAuditListParams(query));
  }
}
