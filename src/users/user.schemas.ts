/** The User resources as response schemas (see openapi/openapi.ts). */
import { type PerField } from '../core/wire-shape.js';
import { id, timestamp } from '../openapi/common.js';
import { pagedSchema, schema, type Schema, shapeSchema } from '../openapi/openapi.js';
import {
  USER_ACCOUNT_FIELDS,
  USER_DELETED_FIELDS,
  USER_SUMMARY_FIELDS,
  type UserAccount,
  type UserDeleted,
  type UserSummary,
} from './user.shape.js';
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
} satisfies PerField<UserSummary, Schema>;

/** The User summary as module routes show it (no `external_id`). */
export const UserSummarySchema = schema(
  'UserSummary',
  shapeSchema(USER_SUMMARY_FIELDS, userSummaryProperties),
);

/** The User summary with `external_id`: the user routes, and a caller's own account. */
export const UserAccountSchema = schema(
  'UserAccount',
  shapeSchema(
    USER_ACCOUNT_FIELDS,
    {
      ...userSummaryProperties,
      external_id: {
        type: 'string',
        nullable: true,
        minLength: 1,
        maxLength: 255,
        description:
          "The identity provider's id for this person (SCIM `externalId`); unique, case-sensitive.",
        example: '8f3c2a4e-51b7-4d0e-9a6f-2b1d7c9e0f13',
      },
    } satisfies PerField<UserAccount, Schema>,
    'The User summary with `external_id`, as administrators see it and as a user sees their own account.',
  ),
);

/** The `data` of a `user.deleted` change event (events/change-event.schemas.ts names it). */
schema(
  'UserDeleted',
  shapeSchema(USER_DELETED_FIELDS, {
    id: userSummaryProperties.id,
    username: userSummaryProperties.username,
  } satisfies PerField<UserDeleted, Schema>),
);

/** A page of `GET /api/users`. */
export const UserListSchema = schema('UserList', pagedSchema('users', UserAccountSchema));

/** A page of User summaries on a module route (`…/personnel/eligible`). */
export const UserSummaryListSchema = schema('UserSummaryList', pagedSchema('users', UserSummarySchema));
