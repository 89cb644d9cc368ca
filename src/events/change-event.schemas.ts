/**
 * The change events as response schemas (see openapi/openapi.ts): one schema per event type, its `type` a single
 * value and its `data` that type's (change-event.shape.ts), and `ChangeEvent`, the union of them told apart by
 * `type`, so a feed reader or a webhook receiver can generate a type for each event's `data`.
 */
import { type PerField } from '../core/wire-shape.js';
import { schema, type Schema, shapeSchema } from '../openapi/openapi.js';
import {
  CHANGE_EVENT_FIELDS,
  CHANGE_EVENT_TYPES,
  type ChangeEventPayloads,
  type ChangeEventResponse,
  type ChangeEventType,
  type MemberChange,
  type MemberEffectiveStatus,
  MEMBER_ROLE_FIELDS,
  type MemberRole,
  type MembersChanged,
} from './change-event.shape.js';

export const CURSOR_EXAMPLE = 'NzQ2LjEwMjQ';

/** A schema the features register (module.schemas.ts, user.schemas.ts), by its name: events/ imports no feature. */
const named = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

const userId = { type: 'integer', format: 'int64', minimum: 1, example: 7 } as const;

const memberRole = shapeSchema(MEMBER_ROLE_FIELDS, {
  user_id: userId,
  role: named('ModuleRole'),
} satisfies PerField<MemberRole, Schema>);

const memberChange = (description: string, from: string, to: string) =>
  shapeSchema(
    ['user_id', 'from', 'to'] as const,
    {
      user_id: userId,
      from: { type: 'string', example: from },
      to: { type: 'string', example: to },
    } satisfies PerField<MemberChange, Schema>,
    description,
  );

const membersChangedProperties = {
  module_id: { type: 'integer', format: 'int64', minimum: 1, example: 42 },
  added: { type: 'array', items: memberRole },
  removed: { type: 'array', items: memberRole },
  changed: { type: 'array', items: memberChange('A role changed.', 'Tutor', 'Lecturer') },
  status_changed: {
    type: 'array',
    description: 'Present when the write changed a membership’s stored status or dates (docs/api.md §15).',
    items: memberChange('A stored status changed.', 'active', 'completed'),
  },
  effective: {
    type: 'array',
    description: 'Present only on the events of the time sweep: effective statuses a passing date changed.',
    items: shapeSchema(['user_id', 'effective_status'] as const, {
      user_id: userId,
      effective_status: { type: 'string', example: 'completed' },
    } satisfies PerField<MemberEffectiveStatus, Schema>),
  },
} satisfies PerField<MembersChanged, Schema>;

const MembersChangedSchema = schema('ModuleMembersChanged', {
  type: 'object',
  required: ['module_id', 'added', 'removed', 'changed'],
  additionalProperties: false,
  properties: membersChangedProperties,
});

/** Each type's `data`: the features' resources by their schema's name, the rest declared here. */
const DATA_SCHEMAS = {
  'module.created': named('Module'),
  'module.updated': named('Module'),
  'module.deleted': named('ModuleDeleted'),
  'module.members_changed': MembersChangedSchema,
  'user.created': named('UserAccount'),
  'user.updated': named('UserAccount'),
  'user.deleted': named('UserDeleted'),
} satisfies PerField<ChangeEventPayloads, Schema>;

/** `module.members_changed` → `ModuleMembersChangedEvent`. */
const eventSchemaName = (type: ChangeEventType) =>
  `${type
    .split(/[._]/)
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join('')}Event`;

const eventProperties = (type: ChangeEventType) =>
  ({
    id: {
      type: 'string',
      description: 'Opaque cursor of this event: pass it as `after` to read the events after it.',
      example: CURSOR_EXAMPLE,
    },
    type: { type: 'string', enum: [type], example: type },
    at: { type: 'string', format: 'date-time', example: '2026-11-21T08:41:00.123Z' },
    data: DATA_SCHEMAS[type],
  }) satisfies PerField<ChangeEventResponse, Schema>;

const EVENT_SCHEMAS = Object.fromEntries(
  CHANGE_EVENT_TYPES.map((type) => [
    type,
    schema(
      eventSchemaName(type),
      shapeSchema(
        CHANGE_EVENT_FIELDS,
        eventProperties(type),
        `A \`${type}\` event, as the feed answers it; a webhook delivery's body carries its \`type\` and \`data\`.`,
      ),
    ),
  ]),
) as Record<ChangeEventType, Schema & { $ref: string }>;

/** Any change event: one of the schemas above, by its `type`. */
export const ChangeEventSchema = schema('ChangeEvent', {
  oneOf: CHANGE_EVENT_TYPES.map((type) => EVENT_SCHEMAS[type]),
  discriminator: {
    propertyName: 'type',
    mapping: Object.fromEntries(CHANGE_EVENT_TYPES.map((type) => [type, EVENT_SCHEMAS[type].$ref])),
  },
});
