import { fieldsOf } from '../core/wire-shape.js';

/**
 * One delivery attempt of a webhook (`GET /api/webhooks/{webhook_id}/deliveries`, docs/api.md §12), the one
 * place its fields are written: the mapper (`toDeliveryResponse`, webhook.mapper.ts), the columns read
 * (`DELIVERY_COLUMNS`, webhook-deliveries.repository.ts) and the OpenAPI schema (`WebhookDelivery`, webhook.schemas.ts)
 * each hold one entry per field, checked against this interface when the project compiles (core/wire-shape.ts).
 */
export interface DeliveryResponse {
  id: number;
  event_id: string;
  event_type: string;
  attempt: number;
  at: string;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
  next_retry_at: string | null;
}

/** The delivery's fields in wire order. */
export const DELIVERY_FIELDS = fieldsOf<DeliveryResponse>()([
  'id',
  'event_id',
  'event_type',
  'attempt',
  'at',
  'outcome',
  'status_code',
  'error',
  'duration_ms',
  'response_excerpt',
  'next_retry_at',
] as const);
