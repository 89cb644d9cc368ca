import { type UserSummarySource } from './user.mapper.js';

/** The columns a User summary needs, for raw SQL (`SELECT ${USER_COLUMNS} FROM users u`). */
export const USER_COLUMNS = 'u.id, u.username, u.email, u.admin, u.avatar_key, u.created_at, u.updated_at';

export interface UserRow {
  id: string;
  username: string;
  email: string;
  admin: boolean;
  avatar_key: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A raw row in the shape `toUserSummary` reads. */
export function fromUserRow(row: UserRow): UserSummarySource {
  return {
    id: Number(row.id),
    username: row.username,
    email: row.email,
    admin: row.admin,
    avatarKey: row.avatar_key,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The unique index a PostgreSQL unique violation (23505) names, if `error` is one. */
export function violatedUniqueIndex(error: unknown): string | undefined {
  const driver = (error as { driverError?: { code?: unknown; constraint?: unknown } } | null)?.driverError;
  return driver?.code === '23505' && typeof driver.constraint === 'string' ? driver.constraint : undefined;
}

/** Runs `task` over `items` with at most `limit` running at once; results keep the input order. */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
