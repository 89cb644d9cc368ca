import { type PerField } from '../core/wire-shape.js';
import { isoTimestampText, rowJsonText } from '../database/sql.js';
import {
  USER_ACCOUNT_FIELDS,
  USER_SUMMARY_FIELDS,
  type UserAccount,
  type UserSummary,
} from './user.shape.js';

// The User summary's SQL twin, beside its shape (user.shape.ts): a field added there fails to compile here.

/** Each field of the User summary (users/user.shape.ts) as an SQL expression over `users u`, as `toUserSummary` writes it. */
const USER_SUMMARY_JSON_SQL = {
  id: 'u.id',
  username: 'u.username',
  email: 'u.email',
  given_name: 'u.given_name',
  family_name: 'u.family_name',
  display_name: 'u.display_name',
  active: 'u.active',
  admin: 'u.admin',
  created_at: isoTimestampText('u.created_at'),
  updated_at: isoTimestampText('u.updated_at'),
  avatar_url: `CASE WHEN u.avatar_key <> '' THEN '/api/users/' || u.id || '/avatar' END`,
} as const satisfies PerField<UserSummary, string>;

/** A User summary (`toUserSummary`) as compact JSON text, byte for byte as `JSON.stringify` writes it. */
export const USER_SUMMARY_JSON = rowJsonText(USER_SUMMARY_FIELDS, USER_SUMMARY_JSON_SQL);

/** The admin view (`toUserAccount`): the summary's fields, then `external_id`. */
const USER_ACCOUNT_JSON_SQL = {
  ...USER_SUMMARY_JSON_SQL,
  external_id: 'u.external_id',
} as const satisfies PerField<UserAccount, string>;

/** A User account (`toUserAccount`) as compact JSON text, byte for byte as `JSON.stringify` writes it. */
export const USER_ACCOUNT_JSON = rowJsonText(USER_ACCOUNT_FIELDS, USER_ACCOUNT_JSON_SQL);
