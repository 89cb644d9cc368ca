import { fieldsOf } from '../core/wire-shape.js';

/**
 * A webhook of the contract (docs/api.md §12), the one place its fields are written: the mapper
 * (`toWebhookResponse`, webhook.mapper.ts) and the OpenAPI schema (`webhookProperties`, webhook.schemas.ts) each
 * hold one entry per field, checked against this interface when the project compiles (core/wire-shape.ts). The
 * secret is never part of it (only `CreatedWebhook` carries it, once).
 */
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

/** The webhook's fields in the order the contract and every serialisation write them. */
export const WEBHOOK_FIELDS = fieldsOf<WebhookResponse>()([
  'id',
  'url',
  'types',
  'description',
  'enabled',
  'created_at',
  'updated_at',
  'failing_since',
] as const);
