import { contractFields } from '../../test/support/contract-text.js';
import { namedSchemas } from '../openapi/openapi.js';
import './audit.controller.js';
import { AUDIT_EVENT_FIELDS } from './audit-event.shape.js';
import { toAuditEventResponse } from './audit.mapper.js';

describe('the audit event shape', () => {
  it('is the field list of docs/api.md, and what the mapper and the OpenAPI schema write, in its order', () => {
    expect(AUDIT_EVENT_FIELDS).toEqual(contractFields('An event is', '## 10.'));
    const event = toAuditEventResponse({
      id: 1,
      at: new Date('2026-11-21T08:41:00.123Z'),
      actor_id: null,
      action: 'module.create',
      target_type: 'module',
      target_ids: ['7' as unknown as number],
      summary: {},
      request_id: null,
      client_ip: null,
    });
    expect(Object.keys(event)).toEqual(AUDIT_EVENT_FIELDS);
    expect(event.target_ids).toEqual([7]);
    const schema = namedSchemas.AuditEvent as { required: string[]; properties: object };
    expect(schema.required).toEqual(AUDIT_EVENT_FIELDS);
    expect(Object.keys(schema.properties)).toEqual(AUDIT_EVENT_FIELDS);
  });
});
