// Part of test/scim.e2e-spec.ts: Okta's provisioning, replayed.
import { type UsedTestApp } from '../../support/app.js';
import { tokenFor } from '../../support/factories.js';
import { request } from '../../support/http.js';
import {
  expectUniquenessConflict,
  LIST_SCHEMA,
  patchBody,
  type ReplayStep,
  USER_SCHEMA,
  useScimClient,
} from '../../support/scim.js';

/**
 * Okta's provisioning, replayed: the calls of Okta's published "SCIM 2.0 Spec Test" (the Runscope suite an
 * integration must pass before Okta lists it), in its order, then the lifecycle an Okta SCIM 2.0 app with
 * "Create Users", "Update User Attributes" and "Deactivate Users" enabled drives. Bodies are as Okta sends them
 * (`application/scim+json`, a PUT with the whole user for profile pushes, a path-less `{"active": false}` PATCH
 * to deactivate). `{placeholders}` are filled from earlier answers.
 */

const RANDOM = `okta${Date.now()}`;
const OKTA_USER = {
  schemas: [USER_SCHEMA],
  userName: `${RANDOM}@atko.com`,
  name: { givenName: 'Test', familyName: 'User' },
  emails: [{ primary: true, value: `${RANDOM}@atko.com`, type: 'work' }],
  displayName: 'Test User',
  locale: 'en-US',
  externalId: '00ujl29u0le5T6Aj10h7',
  groups: [],
  password: '1mz050nq',
  active: true,
};

const isNumber = (value: unknown) => expect(typeof value).toBe('number');

/** Okta's SCIM 2.0 Spec Test, in order. */
const SPEC_TEST: ReplayStep[] = [
  {
    name: 'Required Test: Test Users endpoint',
    method: 'GET',
    path: '/Users?count=1&startIndex=1',
    expect: (res, seen) => {
      expect(res.status).toBe(200);
      expect(res.body.schemas).toEqual([LIST_SCHEMA]);
      isNumber(res.body.itemsPerPage);
      isNumber(res.body.startIndex);
      isNumber(res.body.totalResults);
      const [first] = res.body.Resources;
      // Okta's test reads these of the first user listed: users need names.
      expect(first.id).toEqual(expect.any(String));
      expect(first.name.familyName).toEqual(expect.any(String));
      expect(first.name.givenName).toEqual(expect.any(String));
      expect(first.userName).toEqual(expect.any(String));
      expect(typeof first.active).toBe('boolean');
      expect(first.emails[0].value).toEqual(expect.any(String));
      seen.ISVUserid = first.id;
    },
  },
  {
    name: 'Required Test: Get Users/{{id}}',
    method: 'GET',
    path: '/Users/{ISVUserid}',
    expect: (res, seen) => {
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(seen.ISVUserid);
      expect(res.body.name.familyName).toEqual(expect.any(String));
      expect(res.body.emails[0].value).toEqual(expect.any(String));
    },
  },
  {
    name: 'Required Test: Test invalid User by username',
    method: 'GET',
    path: '/Users?filter=userName%20eq%20%22invalidUser%40atko.com%22',
    expect: (res) => {
      expect(res.status).toBe(200);
      expect(res.body.totalResults).toBe(0);
      expect(res.body.Resources).toEqual([]);
    },
  },
  {
    name: 'Required Test: Test invalid User by ID',
    method: 'GET',
    path: '/Users/010101001010101011',
    expect: (res) => {
      expect(res.status).toBe(404);
      expect(res.body.schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error']);
      expect(res.body.detail).toEqual(expect.any(String));
    },
  },
  {
    name: "Required Test: Make sure random user doesn't exist",
    method: 'GET',
    path: `/Users?filter=userName%20eq%20%22${RANDOM}%40atko.com%22`,
    expect: (res) => {
      expect(res.status).toBe(200);
      expect(res.body.totalResults).toBe(0);
    },
  },
  {
    name: 'Required Test: Create Okta user with realistic values',
    method: 'POST',
    path: '/Users',
    body: OKTA_USER,
    expect: (res, seen) => {
      expect(res.status).toBe(201);
      expect(res.body.userName).toBe(OKTA_USER.userName);
      expect(res.body.active).toBe(true);
      expect(res.body.name).toMatchObject(OKTA_USER.name);
      expect(res.body.emails[0].value).toBe(OKTA_USER.emails[0].value);
      seen.idUserOne = res.body.id;
    },
  },
  {
    name: 'Required Test: Verify that user was created',
    method: 'GET',
    path: '/Users/{idUserOne}',
    expect: (res) => {
      expect(res.status).toBe(200);
      expect(res.body.userName).toBe(OKTA_USER.userName);
      expect(res.body.name).toMatchObject(OKTA_USER.name);
    },
  },
  {
    name: 'Required Test: Expect failure when recreating user with same values',
    method: 'POST',
    path: '/Users',
    body: OKTA_USER,
    expect: expectUniquenessConflict,
  },
  {
    name: 'Required Test: Username Case Sensitivity Check',
    method: 'GET',
    path: `/Users?filter=userName%20eq%20%22${RANDOM.toUpperCase()}%40ATKO.COM%22`,
    expect: (res, seen) => {
      expect(res.status).toBe(200);
      expect(res.body.totalResults).toBe(1);
      expect(res.body.Resources[0].id).toBe(seen.idUserOne);
    },
  },
  {
    name: 'Optional Test: Verify Groups endpoint',
    method: 'GET',
    path: '/Groups',
    expect: (res) => {
      expect(res.status).toBe(200);
      expect(res.body.schemas).toEqual([LIST_SCHEMA]);
      isNumber(res.body.totalResults);
    },
  },
  {
    name: 'Required Test: Delete the test user (cleanup)',
    method: 'DELETE',
    path: '/Users/{idUserOne}',
    expect: (res) => expect(res.status).toBe(204),
  },
];

const PERSON = {
  schemas: [USER_SCHEMA],
  userName: 'jane.doe@uni.edu',
  name: { givenName: 'Jane', familyName: 'Doe' },
  emails: [{ primary: true, value: 'jane.doe@uni.edu', type: 'work' }],
  displayName: 'Jane Doe',
  locale: 'en-US',
  externalId: '00u1abcdEFGHijkl2p3q',
  groups: [],
  password: 'kJ8lX2nq',
  active: true,
};

/** Okta's PATCH of `active` (a path-less replace), and its check of the answer. */
const setActive = (name: string, active: boolean): ReplayStep => ({
  name,
  method: 'PATCH',
  path: '/Users/{id}',
  body: patchBody({ op: 'replace', value: { active } }),
  expect: (res) => {
    expect(res.status).toBe(200);
    expect(res.body.active).toBe(active);
  },
});

/** The lifecycle of one person through an Okta SCIM 2.0 app: create, update, deactivate, reactivate. */
const LIFECYCLE: ReplayStep[] = [
  {
    name: 'Okta looks the person up before creating them',
    method: 'GET',
    path: '/Users?filter=userName%20eq%20%22jane.doe%40uni.edu%22&startIndex=1&count=100',
    expect: (res) => expect(res.body).toMatchObject({ totalResults: 0, Resources: [] }),
  },
  {
    name: 'Create Users',
    method: 'POST',
    path: '/Users',
    body: PERSON,
    expect: (res, seen) => {
      expect(res.status).toBe(201);
      seen.id = res.body.id;
    },
  },
  {
    name: 'Update User Attributes (Okta pushes the whole profile with PUT)',
    method: 'PUT',
    path: '/Users/{id}',
    body: {
      ...PERSON,
      id: '{id}',
      name: { givenName: 'Jane', familyName: 'Doe-Smith' },
      displayName: 'Jane Doe-Smith',
    },
    expect: (res) => {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        name: { familyName: 'Doe-Smith' },
        displayName: 'Jane Doe-Smith',
        active: true,
      });
    },
  },
  setActive('Deactivate Users (path-less replace of active)', false),
  {
    name: 'Okta reads the deactivated person back',
    method: 'GET',
    path: '/Users/{id}',
    expect: (res) => expect(res.body).toMatchObject({ active: false, name: { familyName: 'Doe-Smith' } }),
  },
  setActive('Reactivate Users', true),
];

export function oktaReplay({ app }: UsedTestApp): void {
  const { scim, replay } = useScimClient(app);

  it("passes Okta's SCIM 2.0 Spec Test, in order, against a directory with one person in it", async () => {
    // The test reads the first user listed: a person the directory already holds.
    const seeded = await scim({
      method: 'POST',
      path: '/Users',
      body: {
        ...PERSON,
        userName: 'ada@uni.edu',
        emails: [{ value: 'ada@uni.edu', primary: true }],
        externalId: 'ada',
      },
    });
    expect(seeded.status).toBe(201);
    await replay(SPEC_TEST);
  });

  it('runs the lifecycle: create, update, deactivate (sign-in refused), reactivate (sign-in works again)', async () => {
    const seen: Record<string, string> = {};
    const signedIn = async () => {
      const user = { id: Number(seen.id), admin: false };
      return (await request(app.url, 'GET', '/api/auth/me', { token: tokenFor(user) })).status;
    };
    await replay(LIFECYCLE.slice(0, 3), seen);
    expect(await signedIn()).toBe(200);
    await replay(LIFECYCLE.slice(3, 5), seen);
    // Deactivated: every token of theirs is refused (at once on this replica).
    expect(await signedIn()).toBe(401);
    await replay(LIFECYCLE.slice(5), seen);
    expect(await signedIn()).toBe(200);
    const [row] = await app.dataSource.query(
      `SELECT family_name, display_name, active, external_id FROM users WHERE username = 'jane.doe@uni.edu'`,
    );
    expect(row).toEqual({
      family_name: 'Doe-Smith',
      display_name: 'Jane Doe-Smith',
      active: true,
      external_id: '00u1abcdEFGHijkl2p3q',
    });
    const audit = await app.dataSource.query(
      `SELECT action, summary FROM audit_events WHERE action LIKE 'user.%' ORDER BY id`,
    );
    expect(
      audit.map((event: { action: string; summary: { active?: unknown } }) => [
        event.action,
        event.summary.active,
      ]),
    ).toEqual([
      ['user.create', undefined],
      ['user.update', undefined],
      ['user.update', { from: true, to: false }],
      ['user.update', { from: false, to: true }],
    ]);
  });
}
