/** The Module resources and the results of the Modules API as response schemas (see openapi/openapi.ts). */
import { type PerField } from '../../core/wire-shape.js';
import { id, timestamp } from '../../openapi/common.js';
import { pagedSchema, schema, type Schema, shapeSchema } from '../../openapi/openapi.js';
import { UserSummarySchema } from '../../users/user.schemas.js';
import {
  type ModuleDeleted,
  MODULE_DELETED_FIELDS,
  MODULE_FIELDS,
  type ModuleResponse,
} from './module.shape.js';
import { type ModuleWithPersonnel, type ModuleWithRole } from './module.mapper.js';
import { MODULE_ROLES } from './module-role.js';

const moduleProperties = {
  id,
  code: { type: 'string', example: 'CSC101' },
  year: { type: 'integer', format: 'int32', example: 2026 },
  description: { type: 'string', nullable: true, example: 'Introduction to Computer Science' },
  credits: { type: 'integer', format: 'int32', example: 15 },
  created_at: timestamp,
  updated_at: timestamp,
} satisfies PerField<ModuleResponse, Schema>;

export const ModuleSchema = schema('Module', shapeSchema(MODULE_FIELDS, moduleProperties));

/** The `data` of a `module.deleted` change event (events/change-event.schemas.ts names it). */
schema(
  'ModuleDeleted',
  shapeSchema(MODULE_DELETED_FIELDS, {
    id: moduleProperties.id,
    code: moduleProperties.code,
    year: moduleProperties.year,
  } satisfies PerField<ModuleDeleted, Schema>),
);

export const RoleSchema = schema('ModuleRole', {
  type: 'string',
  enum: [...MODULE_ROLES],
  example: 'Lecturer',
});

export const ModuleWithPersonnelSchema = schema('ModuleWithPersonnel', {
  type: 'object',
  required: [...MODULE_FIELDS, 'lecturers', 'assistant_lecturers', 'tutors', 'students'],
  additionalProperties: false,
  properties: {
    ...moduleProperties,
    lecturers: { type: 'array', items: UserSummarySchema },
    assistant_lecturers: { type: 'array', items: UserSummarySchema },
    tutors: { type: 'array', items: UserSummarySchema },
    students: { type: 'array', items: UserSummarySchema },
  } satisfies PerField<ModuleWithPersonnel, Schema>,
});

/** A Module with a user's role in it (`GET /api/users/{user_id}/modules`). */
export const ModuleWithRoleSchema = schema('ModuleWithRole', {
  type: 'object',
  required: [...MODULE_FIELDS, 'role'],
  additionalProperties: false,
  properties: { ...moduleProperties, role: RoleSchema } satisfies PerField<ModuleWithRole, Schema>,
});

export const ModuleListSchema = schema('ModuleList', pagedSchema('modules', ModuleSchema));

export const MyModulesSchema = schema('MyModules', {
  type: 'object',
  required: ['as_student', 'as_tutor', 'as_lecturer', 'as_assistant_lecturer'],
  additionalProperties: false,
  properties: {
    as_student: { type: 'array', items: ModuleSchema },
    as_tutor: { type: 'array', items: ModuleSchema },
    as_lecturer: { type: 'array', items: ModuleSchema },
    as_assistant_lecturer: { type: 'array', items: ModuleSchema },
  },
});

export const BulkDeleteResultSchema = schema('BulkDeleteResult', {
  type: 'object',
  required: ['deleted', 'failed'],
  additionalProperties: false,
  properties: {
    deleted: { type: 'integer', minimum: 0, example: 2 },
    failed: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'error'],
        additionalProperties: false,
        properties: {
          id: { type: 'integer', format: 'int64', example: 99 },
          error: { type: 'string', example: 'Module not found' },
        },
      },
    },
  },
});
