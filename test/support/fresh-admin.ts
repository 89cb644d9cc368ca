import { rm } from 'node:fs/promises';
import { type TestApp } from './app.js';
import { type MakeUser, makeUser, tokenFor, type UserRow } from './factories.js';

/**
 * The start of most tests: empties every table (and, with `clearStorage`, the file store) and creates an
 * administrator with a token. Call in `beforeEach`.
 */
export async function freshAdmin(
  app: TestApp,
  options: MakeUser & { clearStorage?: boolean } = {},
): Promise<{ admin: UserRow; token: string }> {
  const { clearStorage, ...overrides } = options;
  await app.reset();
  if (clearStorage) await rm(app.config.storageDir, { recursive: true, force: true });
  const admin = await makeUser(app.dataSource, { ...overrides, admin: true });
  return { admin, token: tokenFor(admin) };
}
