// Part of test/scim.e2e-spec.ts: Microsoft Entra ID's provisioning, replayed.
import { type UsedTestApp } from '../../support/app.js';
import { DEFAULT_PASSWORD } from '../../support/factories.js';
import { request } from '../../support/http.js';
import { type TestIdp } from '../../support/idp.js';
import {
  emptyListResponse,
  expectUniquenessConflict,
  fillPlaceholders,
  patchBody,
  type ReplayStep,
  USER_SCHEMA,
  useScimClient,
} from '../../support/scim.js';

/**
 * Microsoft Entra ID's provisioning service, replayed: the calls its SCIM client makes (Microsoft's "Develop and
 * plan provisioning for a SCIM endpoint" request and response examples, and what its provisioning logs show),
 * once as it sends them with `aadOptscim062020` in the tenant URL (RFC-conforming PATCH: lower-case ops, real
 * booleans) and once without it (capitalised `Replace`/`Add`, `"False"` as a string, path-less `Add` with dotted
 * keys). Entra's ids in paths are its own GUIDs until it has learnt ours. `{placeholders}` come from answers.
 */

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

/** One Entra run: `flag` is appended to every path as the tenant URL carries it. */
function entraSequence(flag: boolean): ReplayStep[] {
  const q = (path: string) => (flag ? `${path}${path.includes('?') ? '&' : '?'}aadOptscim062020` : path);
  const op = (name: string) => (flag ? name.toLowerCase() : name);
  const bool = (value: boolean) => (flag ? value : value ? 'True' : 'False');
  const user = {
    schemas: [USER_SCHEMA, ENTERPRISE],
    externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
    userName: 'Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1@uni.edu',
    active: true,
    emails: [
      { primary: true, type: 'work', value: 'Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com' },
    ],
    meta: { resourceType: 'User' },
    name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
    roles: [],
    [ENTERPRISE]: { department: 'Computer Science', employeeNumber: '701984' },
  };
  return [
    {
      name: 'Test Connection: a filter on a random GUID must be an empty 200 ListResponse',
      method: 'GET',
      path: q('/Users?filter=userName+eq+%22f3b6a2c4-9d1e-4b7a-8c55-2e6f0a9d3b17%22'),
      expect: (res) => {
        expect(res.status).toBe(200);
        expect(res.body).toEqual(emptyListResponse());
      },
    },
    {
      name: 'Get user by a GUID id it has not learnt: 404, not 400',
      method: 'GET',
      path: q('/Users/5171a35d82074e068ce2'),
      expect: (res) => {
        expect(res.status).toBe(404);
        expect(res.body.schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error']);
        expect(res.body.status).toBe('404');
      },
    },
    {
      name: 'Get user by query (matching on externalId, before creating)',
      method: 'GET',
      path: q('/Users?filter=externalId+eq+%220a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef%22'),
      expect: (res) => expect(res.body.totalResults).toBe(0),
    },
    {
      name: 'Create user',
      method: 'POST',
      path: q('/Users'),
      body: user,
      expect: (res, seen) => {
        expect(res.status).toBe(201);
        expect(res.headers.get('location')).toBe(res.body.meta.location);
        expect(res.body).toMatchObject({
          externalId: user.externalId,
          userName: user.userName,
          active: true,
        });
        seen.id = res.body.id;
      },
    },
    {
      name: 'Get user by query (userName)',
      method: 'GET',
      path: q(`/Users?filter=userName+eq+%22${encodeURIComponent(user.userName)}%22`),
      expect: (res, seen) => {
        expect(res.body.totalResults).toBe(1);
        expect(res.body.Resources[0].id).toBe(seen.id);
      },
    },
    {
      name: 'Get user by query (the work email)',
      method: 'GET',
      path: q(
        `/Users?filter=emails%5Btype+eq+%22work%22%5D.value+eq+%22${encodeURIComponent(user.emails[0].value.toUpperCase())}%22`,
      ),
      expect: (res, seen) => expect(res.body.Resources.map((r: { id: string }) => r.id)).toEqual([seen.id]),
    },
    {
      name: 'Create a duplicate user: 409 uniqueness',
      method: 'POST',
      path: q('/Users'),
      body: user,
      expect: expectUniquenessConflict,
    },
    {
      name: 'Get user',
      method: 'GET',
      path: q('/Users/{id}'),
      expect: (res) =>
        expect(res.body.name).toEqual({
          givenName: 'givenName',
          familyName: 'familyName',
          formatted: 'givenName familyName',
        }),
    },
    {
      name: 'Update user [multi-valued properties]',
      method: 'PATCH',
      path: q('/Users/{id}'),
      body: patchBody(
        { op: op('Replace'), path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
        { op: op('Replace'), path: 'name.familyName', value: 'updatedFamilyName' },
      ),
      expect: (res) => {
        expect(res.status).toBe(200);
        expect(res.body.emails).toEqual([
          { value: 'updatedemail@microsoft.com', type: 'work', primary: true },
        ]);
        expect(res.body.name.familyName).toBe('updatedFamilyName');
      },
    },
    {
      name: 'Update user [single-valued properties]',
      method: 'PATCH',
      path: q('/Users/{id}'),
      body: patchBody({
        op: op('Replace'),
        path: 'userName',
        value: '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com',
      }),
      expect: (res) => expect(res.body.userName).toBe('5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com'),
    },
    flag
      ? {
          name: 'Update user: several attributes in one replace',
          method: 'PATCH',
          path: q('/Users/{id}'),
          body: patchBody(
            { op: 'replace', path: 'displayName', value: 'Given Updated' },
            { op: 'replace', path: 'name.givenName', value: 'Given' },
            { op: 'add', path: `${ENTERPRISE}:department`, value: 'Mathematics' },
          ),
          expect: (res) =>
            expect(res.body).toMatchObject({ displayName: 'Given Updated', name: { givenName: 'Given' } }),
        }
      : {
          name: 'Update user: path-less Add with dotted keys',
          method: 'PATCH',
          path: q('/Users/{id}'),
          body: patchBody({
            op: 'Add',
            value: {
              displayName: 'Given Updated',
              'name.givenName': 'Given',
              'emails[type eq "work"].value': 'updatedEmail@microsoft.com',
              [`${ENTERPRISE}:department`]: 'Mathematics',
            },
          }),
          expect: (res) =>
            expect(res.body).toMatchObject({ displayName: 'Given Updated', name: { givenName: 'Given' } }),
        },
    {
      name: 'The 40-minute re-sync: the same values again change nothing',
      method: 'PATCH',
      path: q('/Users/{id}'),
      body: patchBody(
        { op: op('Replace'), path: 'active', value: bool(true) },
        { op: op('Replace'), path: 'emails[type eq "work"].value', value: 'UpdatedEmail@microsoft.com' },
        { op: op('Replace'), path: 'name.familyName', value: 'updatedFamilyName' },
      ),
      expect: (res) => expect(res.status).toBe(200),
    },
    {
      name: 'Disable user',
      method: 'PATCH',
      path: q('/Users/{id}'),
      body: patchBody({ op: op('Replace'), path: 'active', value: bool(false) }),
      expect: (res) => {
        expect(res.status).toBe(200);
        expect(res.body.active).toBe(false);
      },
    },
    {
      name: 'Get user (disabled users are still listed)',
      method: 'GET',
      path: q('/Users?filter=externalId+eq+%220a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef%22'),
      expect: (res) => expect(res.body.Resources[0].active).toBe(false),
    },
    {
      name: 'Groups: Entra checks for groups; there are none',
      method: 'GET',
      path: q('/Groups?excludedAttributes=members&filter=displayName+eq+%22Group1DisplayName%22'),
      expect: (res) => expect(res.body).toMatchObject({ totalResults: 0, Resources: [] }),
    },
    {
      name: 'Delete user',
      method: 'DELETE',
      path: q('/Users/{id}'),
      expect: (res) => expect(res.status).toBe(204),
    },
  ];
}

export function entraReplay({ app, api }: UsedTestApp, idp: TestIdp): void {
  const { scim, replay } = useScimClient(app);

  const counts = async () =>
    (
      await app.dataSource.query(
        `SELECT (SELECT count(*)::int FROM audit_events) AS audit, (SELECT count(*)::int FROM change_events) AS events`,
      )
    )[0] as { audit: number; events: number };

  it('passes its calls with aadOptscim062020 in the tenant URL', async () => {
    await replay(entraSequence(true));
  });

  it('passes its calls without aadOptscim062020 (capitalised ops, "False", path-less dotted keys)', async () => {
    await replay(entraSequence(false));
  });

  it('writes no audit event and no change event for its periodic re-send of unchanged values', async () => {
    // Test Connection, the GUID probe, the lookup and the create.
    await replay(entraSequence(true).slice(0, 4));
    const found = await scim({
      method: 'GET',
      path: '/Users?filter=externalId+eq+%220a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef%22',
    });
    const id = found.body.Resources[0].id as string;
    const before = await counts();
    // A change: one audit event and one change event.
    await scim({
      method: 'PATCH',
      path: `/Users/${id}`,
      body: patchBody(
        { op: 'replace', path: 'emails[type eq "work"].value', value: 'updatedemail@microsoft.com' },
        { op: 'replace', path: 'name.familyName', value: 'updatedFamilyName' },
      ),
    });
    const afterChange = await counts();
    expect(afterChange).toEqual({ audit: before.audit + 1, events: before.events + 1 });
    // Entra's re-send of the same values (email in another case, "True"), twice: nothing is written.
    const [resync] = entraSequence(false).filter((step) => step.name.startsWith('The 40-minute'));
    for (let i = 0; i < 2; i++) {
      const res = await scim(
        fillPlaceholders({ method: resync.method, path: resync.path, body: resync.body }, { id }),
      );
      expect(res.status).toBe(200);
    }
    expect(await counts()).toEqual(afterChange);
  });

  it('lets a SCIM-created jane.doe@uni.edu sign in with an IdP token without creating her again', async () => {
    const created = await scim({
      method: 'POST',
      path: '/Users?aadOptscim062020',
      body: {
        schemas: [USER_SCHEMA],
        externalId: '9f0c7a9e-2a1b-4c3d-8e5f-112233445566',
        userName: 'jane.doe@uni.edu',
        active: true,
        emails: [{ primary: true, type: 'work', value: 'jane.doe@uni.edu' }],
        name: { givenName: 'Jane', familyName: 'Doe' },
        displayName: 'Jane Doe',
      },
    });
    expect(created.status).toBe(201);
    const idpToken = await idp.accessToken({
      preferred_username: 'jane.doe@uni.edu',
      email: 'jane.doe@uni.edu',
    });
    const me = await api.get('/api/auth/me', { token: idpToken });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({
      id: Number(created.body.id),
      username: 'jane.doe@uni.edu',
      given_name: 'Jane',
      family_name: 'Doe',
      display_name: 'Jane Doe',
      active: true,
      admin: false,
    });
    expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM users`)).toEqual([{ n: 1 }]);
    const creations = await app.dataSource.query(
      `SELECT summary FROM audit_events WHERE action = 'user.create'`,
    );
    expect(creations).toEqual([{ summary: expect.objectContaining({ via: 'scim' }) }]);
    // She has no password: password login is refused.
    const login = await request(app.url, 'POST', '/api/auth/login', {
      body: { username: 'jane.doe@uni.edu', password: DEFAULT_PASSWORD },
    });
    expect(login.status).toBe(401);
  });
}
