import { fieldsOf } from '../core/wire-shape.js';
import { type AuditAction, type AuditTargetType } from './audit-actions.js';

/**
 * An audit event of the contract (docs/api.md §10), the one place its fields are written: the columns read
 * (`COLUMNS`, audit.repository.ts), the mapper (`toAuditEventResponse`, audit.mapper.ts) and the OpenAPI schema
 * (`AuditEvent`, audit.controller.ts) each hold one entry per field, checked against this interface when the
 * project compiles (core/wire-shape.ts).
 */
export interface AuditEventResponse {
  id: number;
  at: string;
  actor_id: number | null;
  action: AuditAction;
  target_type: AuditTargetType | null;
  target_ids: number[];
  summary: Record<string, unknown>;
  request_id: string | null;
  client_ip: string | null;
}

/** The event's fields in the order the contract and every serialisation write them. */
export const AUDIT_EVENT_FIELDS = fieldsOf<AuditEventResponse>()([
  'id',
  'at',
  'actor_id',
  'action',
  'target_type',
  'target_ids',
  'summary',
  'request_id',
  'client_ip',
] as const);
