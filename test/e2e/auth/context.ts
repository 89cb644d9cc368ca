// What the parts of test/auth.e2e-spec.ts's authentication tests share: a user made afresh before each test.
import { jest } from '@jest/globals';
import { type UsedTestApp } from '../../support/app.js';
import { makeUser, type UserRow } from '../../support/factories.js';

/**
 * The area's service with the user Jane.Doe made afresh before each test (in `given`), and `signIn`, a
 * `POST /api/auth/login` with a username and password; the service's clock is restored after each test.
 */
export function useSignInUser({ app, api }: UsedTestApp) {
  const given = {} as { user: UserRow };
  beforeEach(async () => {
    await app.reset();
    given.user = await makeUser(app.dataSource, { username: 'Jane.Doe' });
  });
  afterEach(() => jest.restoreAllMocks());

  const signIn = (username: string, password: string) =>
    api.post('/api/auth/login', { body: { username, password } });

  return { app, api, given, signIn };
}

export type AuthContext = ReturnType<typeof useSignInUser>;
