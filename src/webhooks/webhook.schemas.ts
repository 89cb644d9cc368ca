/** The webhook resources as response schemas (see openapi/openapi.ts). */
import { type PerField } from '../core/wire-shape.js';
import { id, timestamp } from '../openapi/common.js';
import { pagedSchema, schema, type Schema, shapeSchema } from '../openapi/openapi.js';
import { DELIVERY_FIELDS, type DeliveryResponse } from './delivery.shape.js';
import { WEBHOOK_FIELDS, type WebhookResponse } from './webhook.shape.js';
import { ALL_TYPES, SUBSCRIBABLE_TYPES, TEST_EVENT_TYPE } from './webhook-types.js';

const webhookProperties = {
  id,
  url: { type: 'string', format: 'uri', example: 'https://203.0.113.10/hooks/modules' },
  types: {
    type: 'array',
    items: { type: 'string', enum: [ALL_TYPES, ...SUBSCRIBABLE_TYPES] },
    example: ['module.created', 'module.updated'],
  },
  description: { type: 'string', nullable: true, example: 'LMS course sync' },
  enabled: { type: 'boolean', example: true },
  created_at: timestamp,
  updated_at: timestamp,
  failing_since: {
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'The first failed attempt since the last delivered one; null while deliveries succeed.',
    example: null,
  },
} satisfies PerField<WebhookResponse, Schema>;

export const WebhookSchema = schema('Webhook', shapeSchema(WEBHOOK_FIELDS, webhookProperties));

export const CreatedWebhookSchema = schema('CreatedWebhook', {
  type: 'object',
  required: [...WEBHOOK_FIELDS, 'secret'],
  additionalProperties: false,
  properties: {
    ...webhookProperties,
    secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]{32}$',
      description: 'Signs every delivery (Standard Webhooks). Shown only in this answer: store it now.',
      example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    },
  },
});

export const WebhookListSchema = schema('WebhookList', pagedSchema('webhooks', WebhookSchema));

const DeliverySchema = schema(
  'WebhookDelivery',
  shapeSchema(DELIVERY_FIELDS, {
    id,
    event_id: { type: 'string', description: 'The `webhook-id` header sent.', example: '1a2b3c' },
    event_type: { type: 'string', example: 'module.updated' },
    attempt: { type: 'integer', minimum: 1, example: 1 },
    at: timestamp,
    outcome: {
      type: 'string',
      enum: ['delivered', 'retrying', 'failed'],
      description: '`retrying`: another attempt is scheduled at `next_retry_at`; `failed`: given up.',
      example: 'delivered',
    },
    status_code: { type: 'integer', nullable: true, example: 200 },
    error: {
      type: 'string',
      nullable: true,
      description: 'Why no answer came (timeout, connection refused, URL not allowed).',
      example: null,
    },
    duration_ms: { type: 'integer', minimum: 0, example: 42 },
    response_excerpt: {
      type: 'string',
      nullable: true,
      maxLength: 200,
      description: 'The first 200 characters of the answer; no more is kept.',
      example: 'ok',
    },
    next_retry_at: { type: 'string', format: 'date-time', nullable: true, example: null },
  } satisfies PerField<DeliveryResponse, Schema>),
);

export const DeliveryListSchema = schema('WebhookDeliveryList', pagedSchema('deliveries', DeliverySchema));

export const TestEventSchema = schema('WebhookTestEvent', {
  type: 'object',
  required: ['event_id', 'type'],
  additionalProperties: false,
  properties: {
    event_id: { type: 'string', example: 'test_6f0e3c2b9a104f7e9d676f0e3c2b9a10' },
    type: { type: 'string', enum: [TEST_EVENT_TYPE] },
  },
});
