import { type DeliveryRow, type WebhookRow } from './webhooks.repository.js';

/** A webhook on the wire (docs/api.md §12); the secret is never part of it. */
export interface WebhookResponse {
  id: number;
  url: string;
  types: string[];
  description: string | null;
  enabled: boolean;
  created_at: string;
  updated_at: string;
  failing_since: string | null;
}

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
