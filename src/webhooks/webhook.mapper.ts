import { type DeliveryResponse } from './delivery.shape.js';
import { type WebhookResponse } from './webhook.shape.js';
import { type DeliveryRow } from './webhook-deliveries.repository.js';
import { type WebhookRow } from './webhooks.repository.js';

export function toWebhookResponse(row: WebhookRow): WebhookResponse {
  return {
    id: Number(row.id),
    url: row.url,
    types: row.types,
    description: row.description,
    enabled: row.enabled,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    failing_since: row.failing_since?.toISOString() ?? null,
  };
}

export function toDeliveryResponse(row: DeliveryRow): DeliveryResponse {
  return {
    id: Number(row.id),
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    at: row.at.toISOString(),
    outcome: row.outcome,
    status_code: row.status_code,
    error: row.error,
    duration_ms: row.duration_ms,
    response_excerpt: row.response_excerpt,
    next_retry_at: row.next_retry_at?.toISOString() ?? null,
  };
}
