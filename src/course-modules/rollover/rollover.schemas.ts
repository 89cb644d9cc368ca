/** The rollover's answer as a response schema (see openapi/openapi.ts). */
import { schema } from '../../openapi/openapi.js';

const RolloverRowSchema = schema('RolloverRow', {
  type: 'object',
  required: ['code', 'from_id', 'to_id', 'action', 'members_copied'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', example: 'CSC101' },
    from_id: {
      type: 'integer',
      format: 'int64',
      nullable: true,
      description: 'Null when `missing`.',
      example: 1,
    },
    to_id: {
      type: 'integer',
      format: 'int64',
      nullable: true,
      description: 'Null on a dry-run `create` and when `missing`.',
      example: 2,
    },
    action: { type: 'string', enum: ['create', 'exists', 'missing'], example: 'create' },
    members_copied: { type: 'integer', minimum: 0, example: 1 },
  },
});

export const RolloverResultSchema = schema('RolloverResult', {
  type: 'object',
  required: ['modules', 'created', 'existing', 'missing', 'members_copied', 'dry_run'],
  additionalProperties: false,
  properties: {
    modules: { type: 'array', items: RolloverRowSchema, description: 'Ordered by code.' },
    created: { type: 'integer', minimum: 0, example: 1 },
    existing: { type: 'integer', minimum: 0, example: 0 },
    missing: { type: 'integer', minimum: 0, example: 0 },
    members_copied: { type: 'integer', minimum: 0, example: 1 },
    dry_run: { type: 'boolean', example: false },
  },
});
