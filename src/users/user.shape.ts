import { fieldsOf } from '../core/wire-shape.js';

/**
 * The User summary of the contract (docs/api.md §3) and its admin view, the one place their fields are written:
 * the mapper (`toUserSummary`, `toUserAccount`, user.mapper.ts), the JSON text built in SQL
 * (`USER_SUMMARY_JSON_SQL`, user-summary-json.ts) and the OpenAPI schemas (user.schemas.ts) each hold one
 * entry per field, checked against these interfaces when the project compiles (core/wire-shape.ts).
 */

/** The User summary as module routes show it: the only shape in which a user leaves the service there. */
export interface UserSummary {
  id: number;
  username: string;
  email: string;
  given_name: string | null;
  family_name: string | null;
  display_name: string | null;
  active: boolean;
  admin: boolean;
  created_at: string;
  updated_at: string;
  avatar_url: string | null;
}

/**
 * The User summary with `external_id`: what admins read (the user routes, CSV exports, change events, SCIM) and
 * what a caller reads of themself (`/api/auth/me`, login, password change).
 */
export interface UserAccount extends UserSummary {
  external_id: string | null;
}

/** The User summary's fields in the order the contract and every serialisation write them. */
export const USER_SUMMARY_FIELDS = fieldsOf<UserSummary>()([
  'id',
  'username',
  'email',
  'given_name',
  'family_name',
  'display_name',
  'active',
  'admin',
  'created_at',
  'updated_at',
  'avatar_url',
] as const);

/** The admin shape's fields: the summary's, then `external_id` (the contract's order stays a prefix). */
export const USER_ACCOUNT_FIELDS = fieldsOf<UserAccount>()([...USER_SUMMARY_FIELDS, 'external_id'] as const);

/** The `data` of `user.deleted`: the deleted user's identity. */
export type UserDeleted = Pick<UserSummary, 'id' | 'username'>;

export const USER_DELETED_FIELDS = fieldsOf<UserDeleted>()(['id', 'username'] as const);

declare module '../events/change-event.shape.js' {
  /** The user events' `data` (docs/api.md §12): the admin view, never a password or hash. */
  interface ChangeEventPayloads {
    'user.created': UserAccount;
    'user.updated': UserAccount;
    'user.deleted': UserDeleted;
  }
}
