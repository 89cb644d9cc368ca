/** The User resources as response schemas (see openapi/openapi.ts). */
import { id, timestamp } from '../openapi/common.js';
import { pagedSchema, schema } from '../openapi/openapi.js';
import { USER_ACCOUNT_FIELDS, USER_SUMMARY_FIELDS } from './user.mapper.js';
import { EMAIL_SCHEMA } from './user-rules.js';

export const userSummaryProperties = {
  id,
  username: { type: 'string', example: 'jsmith' },
  email: { ...EMAIL_SCHEMA, example: 'jsmith@example.edu' },
  given_name: { type: 'string', nullable: true, maxLength: 100, example: 'Jane' },
  family_name: { type: 'string', nullable: true, maxLength: 100, example: 'Smith' },
  display_name: { type: 'string', nullable: true, maxLength: 200, example: 'Jane Smith' },
  active: {
    type: 'boolean',
    description: 'An inactive user cannot sign in and their tokens are refused; memberships are kept.',
    example: true,
  },
  admin: { type: 'boolean', example: false },
  created_at: timestamp,
  updated_at: timestamp,
  avatar_url: { type: 'string', nullable: true, example: '/api/users/1/avatar' },
};
export const userSummaryRequired: string[] = [...USER_SUMMARY_FIELDS];

/** The User summary as module routes show it (no `external_id`). */
export const UserSummarySchema = schema('UserSummary', {
  type: 'object',
  required: userSummaryRequired,
  additionalProperties: false,
  properties: userSummaryProperties,
});

/** The User summary with `external_id`: the user routes, and a caller's own account. */
export const UserAccountSchema = schema('UserAccount', {
  type: 'object',
  description:
    'The User summary with `external_id`, as administrators see it and as a user sees their own account.',
  required: [...USER_ACCOUNT_FIELDS],
  additionalProperties: false,
  properties: {
    ...userSummaryProperties,
    external_id: {
      type: 'string',
      nullable: true,
      minLength: 1,
      maxLength: 255,
      description: "The identity provider's id for this person (SCIM `externalId`); unique, case-sensitive.",
      example: '8f3c2a4e-51b7-4d0e-9a6f-2b1d7c9e0f13',
    },
  },
});

/** A page of `GET /api/users`. */
export const UserListSchema = schema('UserList', pagedSchema('users', UserAccountSchema));

/** A page of User summaries on a module route (`…/personnel/eligible`). */
export const UserSummaryListSchema = schema('UserSummaryList', pagedSchema('users', UserSummarySchema));
