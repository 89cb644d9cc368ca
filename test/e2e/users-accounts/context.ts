// What the parts of test/users-accounts.e2e-spec.ts's people-field tests share: an administrator made afresh before
// each test, a person to create, and a helper that creates one.
import { type UsedTestApp } from '../../support/app.js';
import { type UserRow } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';

export const PASSWORD = 'correct-horse-battery';

/**
 * The area's service with an administrator made afresh before each test (in `given`), the person Jane and a
 * helper that creates a user.
 */
export function usePeopleFields({ app, api }: UsedTestApp) {
  const given = {} as { admin: UserRow; token: string };
  beforeEach(async () => {
    ({ admin: given.admin, token: given.token } = await freshAdmin(app, {
      username: 'root',
      email: 'root@example.edu',
    }));
  });

  const create = (body: Record<string, unknown>) => api.post('/api/users', { token: given.token, body });
  const jane = {
    username: 'jane.doe@uni.edu',
    email: 'jane.doe@uni.edu',
    password: PASSWORD,
    given_name: 'Jane',
    family_name: 'Doe',
    display_name: 'Jane Doe',
    external_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  };

  return { app, api, given, create, jane };
}

export type PeopleFieldsContext = ReturnType<typeof usePeopleFields>;
