import { type AuditEventResponse } from './audit-event.shape.js';
import { type AuditEventRow } from './audit.repository.js';

export function toAuditEventResponse(row: AuditEventRow): AuditEventResponse {
  return {
    id: Number(row.id),
    at: row.at.toISOString(),
    actor_id: row.actor_id === null ? null : Number(row.actor_id),
    action: row.action,
    target_type: row.target_type,
    // pg parses int8 arrays as strings (only scalar int8 has a parser set).
    target_ids: row.target_ids.map(Number),
    summary: row.summary,
    request_id: row.request_id,
    client_ip: row.client_ip,
  };
}
