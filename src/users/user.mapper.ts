import { type User } from './user.entity.js';

/** The User summary of the contract (docs/api.md §3): the only shape in which a user leaves the service. */
export interface UserSummary {
  id: number;
  username: string;
  email: string;
  admin: boolean;
  created_at: string;
  updated_at: string;
  avatar_url: string | null;
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
  'admin',
  'created_at',
  'updated_at',
  'avatar_url',
] as const satisfies readonly (keyof UserSummary)[];

export type UserSummarySource = Pick<
  User,
  'id' | 'username' | 'email' | 'admin' | 'createdAt' | 'updatedAt' | 'avatarKey'
>;

export function toUserSummary(user: UserSummarySource): UserSummary {
  return {
    id: Number(user.id),
    username: user.username,
    email: user.email,
    admin: user.admin,
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
    avatar_url: user.avatarKey ? `/api/users/${user.id}/avatar` : null,
  };
}
