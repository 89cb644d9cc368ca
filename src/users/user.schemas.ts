/** The User resources as response schemas (see openapi/openapi.ts). */
import { id, timestamp } from '../openapi/common.js';
import { pagedSchema, schema } from '../openapi/openapi.js';
import { USER_SUMMARY_FIELDS } from './user.mapper.js';
import { EMAIL_SCHEMA } from './user-rules.js';

export const userSummaryProperties = {
  id,
  username: { type: 'string', example: 'jsmith' },
  email: { ...EMAIL_SCHEMA, example: 'jsmith@example.edu' },
  admin: { type: 'boolean', example: false },
  created_at: timestamp,
  updated_at: timestamp,
  avatar_url: { type: 'string', nullable: true, example: '/api/users/1/avatar' },
};
export const userSummaryRequired: string[] = [...USER_SUMMARY_FIELDS];

export const UserSummarySchema = schema('UserSummary', {
  type: 'object',
  required: userSummaryRequired,
  additionalProperties: false,
  properties: userSummaryProperties,
});

export const UserListSchema = schema('UserList', pagedSchema('users', UserSummarySchema));
