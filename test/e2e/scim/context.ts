// What the parts of test/scim.e2e-spec.ts's route tests share: a person to provision, a SCIM client with a token
// made afresh before each test, and helpers that send a PATCH and create the person.
import { type UsedTestApp } from '../../support/app.js';
import { patchBody, USER_SCHEMA, useScimClient } from '../../support/scim.js';

export const jane = {
  schemas: [USER_SCHEMA],
  userName: 'jane.doe@uni.edu',
  externalId: 'a1b2c3',
  name: { givenName: 'Jane', familyName: 'Doe' },
  displayName: 'Jane Doe',
  emails: [
    { value: 'Jane.Home@Example.org', type: 'home' },
    { value: 'Jane.Doe@Uni.edu', type: 'work', primary: true },
  ],
  active: true,
  password: 'ignored-password-1',
  groups: [{ value: 'staff' }],
};

/**
 * The area's service with a SCIM client whose token is made afresh before each test (useScimClient), and the
 * helpers its parts share.
 */
export function useScimRoutes({ app }: UsedTestApp) {
  const { scim, token } = useScimClient(app);

  const createJane = async () => {
    const res = await scim({ method: 'POST', path: '/Users', body: jane });
    expect(res.status).toBe(201);
    return res.body as { id: string };
  };

  /** `PATCH /Users/{id}` with these operations. */
  const patchUser = (id: string, ...operations: unknown[]) =>
    scim({ method: 'PATCH', path: `/Users/${id}`, body: patchBody(...operations) });

  return { app, scim, token, createJane, patchUser };
}

export type ScimContext = ReturnType<typeof useScimRoutes>;
