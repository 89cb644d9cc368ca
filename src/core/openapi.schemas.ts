/** The resources of SPEC §3 as response schemas (see openapi.ts). */
import { MODULE_ROLES } from '../course-modules/module-role.js';
import { pagedSchema, schema } from './openapi.js';

const timestamp = { type: 'string', format: 'date-time', example: '2026-11-21T08:41:00.123Z' } as const;
const id = { type: 'integer', format: 'int64', minimum: 1, example: 1 } as const;

const moduleProperties = {
  id,
  code: { type: 'string', example: 'CSC101' },
  year: { type: 'integer', format: 'int32', example: 2026 },
  description: { type: 'string', nullable: true, example: 'Introduction to Computer Science' },
  credits: { type: 'integer', format: 'int32', example: 15 },
  created_at: timestamp,
  updated_at: timestamp,
};
const moduleRequired = ['id', 'code', 'year', 'description', 'credits', 'created_at', 'updated_at'];

export const ModuleSchema = schema('Module', {
  type: 'object',
  required: moduleRequired,
  additionalProperties: false,
  properties: moduleProperties,
});

const userSummaryProperties = {
  id,
  username: { type: 'string', example: 'jsmith' },
  email: { type: 'string', format: 'email', example: 'jsmith@example.edu' },
  admin: { type: 'boolean', example: false },
  created_at: timestamp,
  updated_at: timestamp,
  avatar_url: { type: 'string', nullable: true, example: '/api/users/1/avatar' },
};
const userSummaryRequired = ['id', 'username', 'email', 'admin', 'created_at', 'updated_at', 'avatar_url'];

export const UserSummarySchema = schema('UserSummary', {
  type: 'object',
  required: userSummaryRequired,
  additionalProperties: false,
  properties: userSummaryProperties,
});

export const RoleSchema = schema('ModuleRole', {
  type: 'string',
  enum: [...MODULE_ROLES],
  example: 'Lecturer',
});

/** A User summary with the user's role in one module (personnel and students lists). */
export const PersonSchema = schema('ModulePerson', {
  type: 'object',
  required: [...userSummaryRequired, 'role'],
  additionalProperties: false,
  properties: { ...userSummaryProperties, role: RoleSchema },
});

export const ModuleWithPersonnelSchema = schema('ModuleWithPersonnel', {
  type: 'object',
  required: [...moduleRequired, 'lecturers', 'assistant_lecturers', 'tutors', 'students'],
  additionalProperties: false,
  properties: {
    ...moduleProperties,
    lecturers: { type: 'array', items: UserSummarySchema },
    assistant_lecturers: { type: 'array', items: UserSummarySchema },
    tutors: { type: 'array', items: UserSummarySchema },
    students: { type: 'array', items: UserSummarySchema },
  },
});

/** A Module with a user's role in it (`GET /api/users/{user_id}/modules`). */
export const ModuleWithRoleSchema = schema('ModuleWithRole', {
  type: 'object',
  required: [...moduleRequired, 'role'],
  additionalProperties: false,
  properties: { ...moduleProperties, role: RoleSchema },
});

export const SessionSchema = schema('Session', {
  type: 'object',
  required: ['token', 'expires_at', 'user'],
  additionalProperties: false,
  properties: {
    token: { type: 'string', description: 'HS256 JWT; send as `Authorization: Bearer <token>`.' },
    expires_at: timestamp,
    user: UserSummarySchema,
  },
});

/* Results of SPEC §4 and §5, ready for `@ApiOk(status, message, <schema>)`. */

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

export const UserListSchema = schema('UserList', pagedSchema('users', UserSummarySchema));
export const PersonnelListSchema = schema('PersonnelList', pagedSchema('users', PersonSchema));

const count = (name: string, key: string) =>
  schema(name, {
    type: 'object',
    required: [key],
    additionalProperties: false,
    properties: { [key]: { type: 'integer', minimum: 0, example: 2 } },
  });
export const AssignedCountSchema = count('AssignedCount', 'assigned');
export const RemovedCountSchema = count('RemovedCount', 'removed');
export const EnrolledCountSchema = count('EnrolledCount', 'enrolled');
