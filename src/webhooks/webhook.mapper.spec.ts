import { contractFields } from '../../test/support/contract-text.js';
import { CHANGE_EVENT_FIELDS, CHANGE_EVENT_TYPES } from '../events/change-event.shape.js';
import '../events/change-event.schemas.js';
import { namedSchemas } from '../openapi/openapi.js';
import { DELIVERY_FIELDS } from './delivery.shape.js';
import { toDeliveryResponse, toWebhookResponse } from './webhook.mapper.js';
import './webhook.schemas.js';
import { WEBHOOK_FIELDS } from './webhook.shape.js';

const at = new Date('2026-11-21T08:41:00.123Z');
const schemaOf = (name: string) => namedSchemas[name] as { required: string[]; properties: object };

describe('the webhook, delivery and change event shapes', () => {
  it('are the field lists of docs/api.md, in its order', () => {
    expect(WEBHOOK_FIELDS).toEqual(contractFields('A webhook is'));
    expect(DELIVERY_FIELDS).toEqual(contractFields('A delivery attempt is'));
    expect(CHANGE_EVENT_FIELDS).toEqual(contractFields('An event is', '## 12.'));
  });

  it('are what the mappers and the OpenAPI schemas write, in the same order', () => {
    const webhook = toWebhookResponse({
      id: 1,
      url: 'https://example.org/hook',
      types: ['*'],
      description: null,
      enabled: true,
      secret: 'whsec_x',
      created_at: at,
      updated_at: at,
      failing_since: null,
    });
    expect(Object.keys(webhook)).toEqual(WEBHOOK_FIELDS);
    expect(schemaOf('Webhook').required).toEqual(WEBHOOK_FIELDS);
    expect(Object.keys(schemaOf('Webhook').properties)).toEqual(WEBHOOK_FIELDS);
    const delivery = toDeliveryResponse({
      id: 2,
      event_id: 'e1',
      event_type: 'module.created',
      attempt: 1,
      at,
      outcome: 'delivered',
      status_code: 200,
      error: null,
      duration_ms: 3,
      response_excerpt: 'ok',
      next_retry_at: null,
    });
    expect(Object.keys(delivery)).toEqual(DELIVERY_FIELDS);
    expect(Object.keys(schemaOf('WebhookDelivery').properties)).toEqual(DELIVERY_FIELDS);
  });

  it('document each change event type as its own schema, told apart by `type`', () => {
    const union = namedSchemas.ChangeEvent as {
      oneOf: { $ref: string }[];
      discriminator: { propertyName: string; mapping: Record<string, string> };
    };
    expect(union.discriminator.propertyName).toBe('type');
    expect(Object.keys(union.discriminator.mapping)).toEqual(CHANGE_EVENT_TYPES);
    expect(union.oneOf.map((ref) => ref.$ref)).toEqual(Object.values(union.discriminator.mapping));
    for (const [type, ref] of Object.entries(union.discriminator.mapping)) {
      const event = namedSchemas[ref.replace('#/components/schemas/', '')] as {
        required: string[];
        properties: { type: { enum: string[] } };
      };
      expect(event.required).toEqual(CHANGE_EVENT_FIELDS);
      expect(event.properties.type.enum).toEqual([type]);
    }
  });
});
