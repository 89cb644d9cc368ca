import { type User } from './user.entity.js';
import { type UserAccount, type UserSummary } from './user.shape.js';

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
