import { type User } from './user.entity.js';

/**
 * The User summary of the contract (docs/api.md §3) as module routes show it: the only shape in which a user
 * leaves the service there.
 */
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

/**
 * The User summary's fields in the order the contract and every serialisation write them: `toUserSummary`, the
 * JSON text built in SQL (`USER_SUMMARY_JSON`, module-roles.repository.ts) and the OpenAPI schema
 * (user.schemas.ts) are held to it by module.mapper.spec.ts.
 */
export const USER_SUMMARY_FIELDS = [
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
] as const satisfies readonly (keyof UserSummary)[];

/** The admin shape's fields: the summary's, then `external_id` (the contract's order stays a prefix). */
export const USER_ACCOUNT_FIELDS = [
  ...USER_SUMMARY_FIELDS,
  'external_id',
] as const satisfies readonly (keyof UserAccount)[];

export type UserSummarySource = Pick<
  User,
  | 'id'
  | 'username'
  | 'email'
  | 'givenName'
  | 'familyName'
  | 'displayName'
  | 'externalId'
  | 'active'
  | 'admin'
  | 'createdAt'
  | 'updatedAt'
  | 'avatarKey'
>;

/** The summary for module routes: no `external_id`. */
export function toUserSummary(user: Omit<UserSummarySource, 'externalId'>): UserSummary {
  return {
    id: Number(user.id),
    username: user.username,
    email: user.email,
    given_name: user.givenName,
    family_name: user.familyName,
    display_name: user.displayName,
    active: user.active,
    admin: user.admin,
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
    avatar_url: user.avatarKey ? `/api/users/${user.id}/avatar` : null,
  };
}

/** The summary with `external_id`, for admins and for the caller's own account. */
export function toUserAccount(user: UserSummarySource): UserAccount {
  return { ...toUserSummary(user), external_id: user.externalId };
}
