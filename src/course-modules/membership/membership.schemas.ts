/** A module's members as response schemas: the personnel and student lists (see openapi/openapi.ts). */
import { type PerField } from '../../core/wire-shape.js';
import { pagedSchema, schema, type Schema, shapeSchema } from '../../openapi/openapi.js';
import { userSummaryProperties } from '../../users/user.schemas.js';
import { EFFECTIVE_STATUSES } from '../modules/effective-status.js';
import { RoleSchema } from '../modules/module.schemas.js';
import { MEMBERSHIP_STATUSES } from './membership-status.js';
import { type Membership, PERSONNEL_MEMBER_FIELDS } from './membership.shape.js';

/** A User summary with the user's membership of one module (personnel and students lists). */
const membershipProperties = {
  role: RoleSchema,
  status: { type: 'string', enum: [...MEMBERSHIP_STATUSES], example: 'active' },
  starts_at: {
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'Null: open.',
    example: '2026-09-01T08:00:00.000Z',
  },
  ends_at: {
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'Null: open.',
    example: null,
  },
  effective_status: {
    type: 'string',
    enum: [...EFFECTIVE_STATUSES],
    description: 'What the membership amounts to now (docs/api.md §15).',
    example: 'active',
  },
} satisfies PerField<Membership, Schema>;

const PersonSchema = schema(
  'ModulePerson',
  shapeSchema(PERSONNEL_MEMBER_FIELDS, { ...userSummaryProperties, ...membershipProperties }),
);

export const PersonnelListSchema = schema('PersonnelList', pagedSchema('users', PersonSchema));
