// What the parts of test/http.e2e-spec.ts's early-answer tests share: an administrator and a user made once, the
// sizes and messages they send and expect.
import { type UsedTestApp } from '../../support/app.js';
import { makeUser, tokenFor, type UserRow } from '../../support/factories.js';

export const TWO_MIB = 2 * 1024 * 1024;
export const MISSING_USER = 987_654_321;
/** A failure here is a race between the answer and the close: each request is sent a few times. */
export const ROUNDS = 3;

export const TOO_LARGE = 'Request body too large';
export const UNSUPPORTED = 'Unsupported content type';

export function expectEnvelope(body: any, message: string) {
  expect(body).toEqual({ success: false, data: null, message });
}

/**
 * The area's service with an administrator and a user made once for all its tests (in `given`).
 */
export function useEarlyAnswerCallers({ app, api }: UsedTestApp) {
  const given = {} as { admin: UserRow; user: UserRow; adminToken: string; userToken: string };
  beforeAll(async () => {
    await app.reset();
    given.admin = await makeUser(app.dataSource, { admin: true });
    given.user = await makeUser(app.dataSource);
    given.adminToken = tokenFor(given.admin);
    given.userToken = tokenFor(given.user);
  });

  return { app, api, given };
}

export type EarlyAnswerContext = ReturnType<typeof useEarlyAnswerCallers>;
