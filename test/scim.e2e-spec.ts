// SCIM 2.0: the routes, and Okta's and Entra ID's calls replayed as they send them.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import pg from 'pg';
import { testDatabaseUrl, useTestApp } from './support/app.js';
import { DEFAULT_PASSWORD, makeUser, tokenFor } from './support/factories.js';
import { request } from './support/http.js';
import { TEST_AUDIENCE, TestIdp } from './support/idp.js';
import {
  fillPlaceholders,
  LIST_SCHEMA,
  makeScimToken,
  PATCH_SCHEMA,
  replay,
  type ReplayStep,
  SCIM,
  SCIM_CONTENT_TYPE,
  scimError,
  USER_SCHEMA,
  useScimClient,
} from './support/scim.js';
import { makeIntegrationToken } from './support/token-fixtures.js';
import { waitFor } from './support/wait-for.js';

const jane = {
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

describe('SCIM 2.0 (/api/scim/v2, docs/api.md §14)', () => {
  const { app } = useTestApp({ scimEnabled: true, publicBaseUrl: 'https://modules.uni.edu' });
  const { scim, token } = useScimClient(app);
  const patchBody = (...operations: unknown[]) => ({ schemas: [PATCH_SCHEMA], Operations: operations });

  const createJane = async () => {
    const res = await scim({ method: 'POST', path: '/Users', body: jane });
    expect(res.status).toBe(201);
    return res.body as { id: string };
  };

  describe('framing, authentication and scope come first, each as a SCIM error', () => {
    it('answers malformed JSON, a wrong content type and an oversized body with SCIM errors', async () => {
      const malformed = await request(app.url, 'POST', `${SCIM}/Users`, {
        token: token(),
        body: '{"userName": ',
        headers: { 'content-type': SCIM_CONTENT_TYPE },
      });
      expect(malformed.status).toBe(400);
      expect(malformed.headers.get('content-type')).toMatch(/^application\/scim\+json/);
      expect(malformed.body).toEqual(scimError(400, 'Malformed JSON body', 'invalidSyntax'));

      const text = await request(app.url, 'POST', `${SCIM}/Users`, {
        body: 'userName=jane',
        headers: { 'content-type': 'text/plain' },
      });
      expect(text.status).toBe(415);
      expect(text.body).toEqual(scimError(415, 'Unsupported content type'));

      const large = await request(app.url, 'POST', `${SCIM}/Users`, {
        body: JSON.stringify({ userName: 'x', padding: 'x'.repeat(1_100_000) }),
        headers: { 'content-type': SCIM_CONTENT_TYPE },
      });
      expect(large.status).toBe(413);
      expect(large.body).toEqual(scimError(413, 'Request body too large'));
    });

    it('takes application/json too, and application/scim+json with a charset', async () => {
      const res = await request(app.url, 'POST', `${SCIM}/Users`, {
        token: token(),
        body: jane,
        headers: { 'content-type': 'application/scim+json; charset=utf-8' },
      });
      expect(res.status).toBe(201);
      const other = await request(app.url, 'POST', `${SCIM}/Users`, {
        token: token(),
        body: { ...jane, userName: 'john', externalId: 'x', emails: [{ value: 'john@uni.edu' }] },
      });
      expect(other.status).toBe(201);
    });

    it('refuses a missing or bad token with 401, a user token with 401, a token without the scope with 403', async () => {
      const anonymous = await request(app.url, 'GET', `${SCIM}/Users`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual(scimError(401, 'Authentication required'));
      const admin = tokenFor(await makeUser(app.dataSource, { admin: true }));
      for (const bad of [admin, 'mas_nope', `mas_${'A'.repeat(43)}`]) {
        const res = await request(app.url, 'GET', `${SCIM}/Users`, { token: bad });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(scimError(401, 'Invalid or expired token'));
      }
      const events = (await makeIntegrationToken(app.dataSource, ['events'])).token;
      const res = await request(app.url, 'GET', `${SCIM}/Users`, { token: events });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(scimError(403, 'This token may not use SCIM'));
      // A scim token is refused on every other route of the API.
      expect((await request(app.url, 'GET', '/api/users', { token: token() })).status).toBe(401);
    });

    it('checks a PATCH body before the user exists, and the user before uniqueness', async () => {
      const missing = await scim({
        method: 'PATCH',
        path: '/Users/999999',
        body: { schemas: [PATCH_SCHEMA] },
      });
      expect(missing.body).toEqual(
        scimError(400, 'Operations must be an array of 1-100 operations', 'invalidSyntax'),
      );
      const unknownOp = await scim({
        method: 'PATCH',
        path: '/Users/999999',
        body: patchBody({ op: 'merge', path: 'displayName', value: 'x' }),
      });
      expect(unknownOp.status).toBe(400);
      expect(unknownOp.body.scimType).toBe('invalidSyntax');
      const badPath = await scim({
        method: 'PATCH',
        path: '/Users/999999',
        body: patchBody({ op: 'replace', path: 'emails[type eq', value: 'x' }),
      });
      expect(badPath.status).toBe(400);
      expect(badPath.body.scimType).toBe('invalidPath');
      const badValue = await scim({
        method: 'PATCH',
        path: '/Users/999999',
        body: patchBody({ op: 'replace', path: 'active', value: 'maybe' }),
      });
      expect(badValue.body).toEqual(scimError(400, 'active must be a boolean', 'invalidValue'));
      const notFound = await scim({
        method: 'PATCH',
        path: '/Users/999999',
        body: patchBody({ op: 'replace', path: 'active', value: false }),
      });
      expect(notFound.body).toEqual(scimError(404, 'User not found'));
    });
  });

  describe('discovery', () => {
    it('describes the service: patch and filter (200) supported, bulk, sort, etag and changePassword not', async () => {
      const config = await scim({ method: 'GET', path: '/ServiceProviderConfig' });
      expect(config.status).toBe(200);
      expect(config.headers.get('content-type')).toMatch(/^application\/scim\+json/);
      expect(config.body).toMatchObject({
        patch: { supported: true },
        bulk: { supported: false },
        filter: { supported: true, maxResults: 200 },
        changePassword: { supported: false },
        sort: { supported: false },
        etag: { supported: false },
        authenticationSchemes: [expect.objectContaining({ type: 'oauthbearertoken' })],
      });
      const types = await scim({ method: 'GET', path: '/ResourceTypes' });
      expect(types.body).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 1 });
      expect(types.body.Resources[0]).toMatchObject({ id: 'User', endpoint: '/Users', schema: USER_SCHEMA });
      expect((await scim({ method: 'GET', path: '/ResourceTypes/User' })).body.id).toBe('User');
      const schemas = await scim({ method: 'GET', path: '/Schemas' });
      const userSchema = schemas.body.Resources[0];
      expect(userSchema.id).toBe(USER_SCHEMA);
      expect(userSchema.attributes.find((a: { name: string }) => a.name === 'userName')).toMatchObject({
        uniqueness: 'server',
        caseExact: false,
        required: true,
      });
      expect((await scim({ method: 'GET', path: `/Schemas/${USER_SCHEMA}` })).body.id).toBe(USER_SCHEMA);
    });
  });

  describe('Users', () => {
    it('creates a user with no password and no admin rights, answers 201 with an absolute Location', async () => {
      const res = await scim({ method: 'POST', path: '/Users', body: jane });
      expect(res.status).toBe(201);
      const id = res.body.id;
      expect(id).toMatch(/^\d+$/);
      const location = `https://modules.uni.edu/api/scim/v2/Users/${id}`;
      expect(res.headers.get('location')).toBe(location);
      expect(res.body).toEqual({
        schemas: [USER_SCHEMA],
        id,
        externalId: 'a1b2c3',
        userName: 'jane.doe@uni.edu',
        name: { givenName: 'Jane', familyName: 'Doe', formatted: 'Jane Doe' },
        displayName: 'Jane Doe',
        emails: [{ value: 'jane.doe@uni.edu', type: 'work', primary: true }],
        active: true,
        meta: {
          resourceType: 'User',
          created: expect.stringMatching(/Z$/),
          lastModified: expect.stringMatching(/Z$/),
          location,
        },
      });
      const [row] = await app.dataSource.query(
        'SELECT password_hash, admin, email FROM users WHERE id = $1',
        [id],
      );
      expect(row).toEqual({ password_hash: null, admin: false, email: 'jane.doe@uni.edu' });
      expect((await scim({ method: 'GET', path: `/Users/${id}` })).body).toEqual(res.body);
    });

    it('audits SCIM writes with a null actor, via scim and the token id, and writes the change events', async () => {
      const { id } = await createJane();
      await scim({
        method: 'PATCH',
        path: `/Users/${id}`,
        body: patchBody({ op: 'replace', path: 'displayName', value: 'Dr Jane Doe' }),
      });
      expect((await scim({ method: 'DELETE', path: `/Users/${id}` })).status).toBe(204);
      const [{ id: tokenId }] = await app.dataSource.query('SELECT id FROM integration_tokens');
      const audit = await app.dataSource.query(
        'SELECT actor_id, action, target_ids, summary FROM audit_events ORDER BY id',
      );
      expect(audit).toEqual([
        {
          actor_id: null,
          action: 'user.create',
          target_ids: [id],
          summary: { username: 'jane.doe@uni.edu', via: 'scim', token_id: Number(tokenId) },
        },
        {
          actor_id: null,
          action: 'user.update',
          target_ids: [id],
          summary: {
            display_name: { from: 'Jane Doe', to: 'Dr Jane Doe' },
            via: 'scim',
            token_id: Number(tokenId),
          },
        },
        {
          actor_id: null,
          action: 'user.delete',
          target_ids: [id],
          summary: { username: 'jane.doe@uni.edu', via: 'scim', token_id: Number(tokenId) },
        },
      ]);
      const events = await app.dataSource.query('SELECT type, data FROM change_events ORDER BY id');
      expect(events.map((e: { type: string }) => e.type)).toEqual([
        'user.created',
        'user.updated',
        'user.deleted',
      ]);
      expect(events[1].data).toMatchObject({
        id: Number(id),
        display_name: 'Dr Jane Doe',
        external_id: 'a1b2c3',
      });
      expect(events[2].data).toEqual({ id: Number(id), username: 'jane.doe@uni.edu' });
    });

    it.each([
      [{ ...jane, userName: undefined }, 'userName is required'],
      [
        { ...jane, userName: 'a b' },
        "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'",
      ],
      [{ ...jane, emails: [] }, 'A user needs an email address (emails[].value)'],
      [{ ...jane, emails: undefined }, 'A user needs an email address (emails[].value)'],
      [
        { ...jane, emails: [{ value: 'not-an-address', primary: true }] },
        'Email must be a valid email address',
      ],
      [{ ...jane, active: 'perhaps' }, 'active must be a boolean'],
      [{ ...jane, externalId: '' }, 'externalId must be a string of 1-255 characters'],
      [{ ...jane, displayName: 'x'.repeat(201) }, 'displayName must be a string of at most 200 characters'],
    ])('refuses a body breaking a rule with 400 invalidValue (%#)', async (body, detail) => {
      const res = await scim({ method: 'POST', path: '/Users', body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(scimError(400, detail, 'invalidValue'));
      expect(await app.dataSource.query('SELECT id FROM users')).toEqual([]);
    });

    it('answers 409 uniqueness for a taken userName, email or externalId, in that order', async () => {
      await createJane();
      const clash = async (body: unknown) => (await scim({ method: 'POST', path: '/Users', body })).body;
      expect(
        await clash({
          ...jane,
          userName: 'JANE.DOE@UNI.EDU',
          emails: [{ value: 'o@x.org' }],
          externalId: 'z',
        }),
      ).toEqual(scimError(409, 'A user with this username already exists', 'uniqueness'));
      expect(await clash({ ...jane, userName: 'other', externalId: 'z' })).toEqual(
        scimError(409, 'A user with this email already exists', 'uniqueness'),
      );
      expect(await clash({ ...jane, userName: 'other', emails: [{ value: 'o@x.org' }] })).toEqual(
        scimError(409, 'A user with this external ID already exists', 'uniqueness'),
      );
      // externalId is case-sensitive: another case is another person.
      const res = await scim({
        method: 'POST',
        path: '/Users',
        body: { ...jane, userName: 'other', emails: [{ value: 'o@x.org' }], externalId: 'A1B2C3' },
      });
      expect(res.status).toBe(201);
    });

    it('answers 404 for an unknown id and for ids that are no user id (GUIDs), not 400', async () => {
      for (const id of [
        '999999',
        '1d6b2e9a-5b4a-4f3e-9c41-6a0f6a5c7e21',
        '0',
        '99999999999999999999',
        'abc',
      ]) {
        const res = await scim({ method: 'GET', path: `/Users/${id}` });
        expect({ id, status: res.status, body: res.body }).toEqual({
          id,
          status: 404,
          body: scimError(404, 'User not found'),
        });
      }
      expect(
        (await scim({ method: 'DELETE', path: '/Users/1d6b2e9a-5b4a-4f3e-9c41-6a0f6a5c7e21' })).status,
      ).toBe(404);
    });

    it('lists by id with startIndex and count, inactive users included, numbers as numbers', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await scim({
          method: 'POST',
          path: '/Users',
          body: { userName: `user${i}`, emails: [{ value: `user${i}@uni.edu` }], active: i !== 2 },
        });
        ids.push(res.body.id);
      }
      const page = await scim({ method: 'GET', path: '/Users?startIndex=2&count=2' });
      expect(page.status).toBe(200);
      expect(page.body).toMatchObject({
        schemas: [LIST_SCHEMA],
        totalResults: 5,
        startIndex: 2,
        itemsPerPage: 2,
      });
      expect(page.body.Resources.map((r: { id: string }) => r.id)).toEqual([ids[1], ids[2]]);
      expect(page.body.Resources[1].active).toBe(false);
      const none = await scim({ method: 'GET', path: '/Users?count=0' });
      expect(none.body).toEqual({
        schemas: [LIST_SCHEMA],
        totalResults: 5,
        startIndex: 1,
        itemsPerPage: 0,
        Resources: [],
      });
      const clamped = await scim({ method: 'GET', path: '/Users?startIndex=-3&count=5000' });
      expect(clamped.body).toMatchObject({ startIndex: 1, itemsPerPage: 5 });
      const bad = await scim({ method: 'GET', path: '/Users?startIndex=abc' });
      expect(bad.body).toEqual(scimError(400, 'startIndex must be an integer', 'invalidValue'));
      expect((await scim({ method: 'GET', path: '/Users?count=1.5' })).body).toEqual(
        scimError(400, 'count must be an integer', 'invalidValue'),
      );
    });

    it('filters with eq on userName, externalId, id and emails, joined by and, with the case rules', async () => {
      const { id } = await createJane();
      const other = await scim({
        method: 'POST',
        path: '/Users',
        body: { userName: 'john', externalId: 'j-1', emails: [{ value: 'john@uni.edu' }] },
      });
      const matches = async (filter: string) => {
        const res = await scim({ method: 'GET', path: `/Users?filter=${encodeURIComponent(filter)}` });
        expect(res.status).toBe(200);
        return res.body.Resources.map((r: { id: string }) => r.id);
      };
      expect(await matches('userName eq "JANE.DOE@uni.edu"')).toEqual([id]);
      expect(await matches('USERNAME EQ "jane.doe@uni.edu"')).toEqual([id]);
      expect(await matches('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "john"')).toEqual([
        other.body.id,
      ]);
      expect(await matches('externalId eq "a1b2c3"')).toEqual([id]);
      expect(await matches('externalId eq "A1B2C3"')).toEqual([]);
      expect(await matches(`id eq "${id}"`)).toEqual([id]);
      expect(await matches('id eq "8a1c7e52-4b57-4a41-a1bc-4b0b5f6c1d93"')).toEqual([]);
      expect(await matches('emails.value eq "JANE.DOE@UNI.EDU"')).toEqual([id]);
      expect(await matches('emails[type eq "work"].value eq "john@uni.edu"')).toEqual([other.body.id]);
      expect(await matches('userName eq "john" and externalId eq "j-1"')).toEqual([other.body.id]);
      expect(await matches('userName eq "john"  AND  externalId eq "a1b2c3"')).toEqual([]);
      for (const filter of [
        'userName ne "john"',
        'userName eq "john" or userName eq "jane"',
        '(userName eq "john")',
        'displayName eq "Jane Doe"',
        'active eq true',
        'userName eq john',
        'userName eq "john',
        'userName sw "j"',
        'emails[type eq "home"].value eq "x@y.z"',
        'userName eq "john" and',
        '',
        'userName eq "jo\u0000hn"',
        'userName eq "jo\\u0000hn"',
        'externalId eq "a1b2c3\u007f"',
      ]) {
        const res = await scim({ method: 'GET', path: `/Users?filter=${encodeURIComponent(filter)}` });
        expect({ filter, status: res.status, scimType: res.body.scimType }).toEqual({
          filter,
          status: 400,
          scimType: 'invalidFilter',
        });
      }
    });

    it('replaces with PUT: omitted optional attributes become null, an omitted active stays', async () => {
      const { id } = await createJane();
      await scim({
        method: 'PATCH',
        path: `/Users/${id}`,
        body: patchBody({ op: 'replace', path: 'active', value: false }),
      });
      const res = await scim({
        method: 'PUT',
        path: `/Users/${id}`,
        body: { schemas: [USER_SCHEMA], userName: 'jane.doe@uni.edu', emails: [{ value: 'jane@uni.edu' }] },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        userName: 'jane.doe@uni.edu',
        active: false,
        emails: [{ value: 'jane@uni.edu' }],
      });
      expect(res.body).not.toHaveProperty('name');
      expect(res.body).not.toHaveProperty('displayName');
      expect(res.body).not.toHaveProperty('externalId');
      const missing = await scim({
        method: 'PUT',
        path: `/Users/${id}`,
        body: { emails: [{ value: 'j@uni.edu' }] },
      });
      expect(missing.body).toEqual(scimError(400, 'userName is required', 'invalidValue'));
      const noEmail = await scim({ method: 'PUT', path: `/Users/${id}`, body: { userName: 'jane' } });
      expect(noEmail.body).toEqual(
        scimError(400, 'A user needs an email address (emails[].value)', 'invalidValue'),
      );
    });

    it('applies PATCH operations all or nothing, and a PATCH that changes nothing writes no audit and no event', async () => {
      const { id } = await createJane();
      const failing = await scim({
        method: 'PATCH',
        path: `/Users/${id}`,
        body: patchBody(
          { op: 'replace', path: 'displayName', value: 'Changed' },
          { op: 'replace', path: 'userName', value: 'not valid!' },
        ),
      });
      expect(failing.status).toBe(400);
      expect((await scim({ method: 'GET', path: `/Users/${id}` })).body.displayName).toBe('Jane Doe');

      const [{ n: auditBefore }] = await app.dataSource.query('SELECT count(*)::int AS n FROM audit_events');
      const [{ n: eventsBefore }] = await app.dataSource.query(
        'SELECT count(*)::int AS n FROM change_events',
      );
      const same = await scim({
        method: 'PATCH',
        path: `/Users/${id}`,
        body: patchBody(
          { op: 'Replace', path: 'displayName', value: 'Jane Doe' },
          { op: 'Add', path: 'emails[type eq "work"].value', value: 'JANE.DOE@uni.edu' },
          { op: 'replace', value: { 'name.givenName': 'Jane', active: 'True', title: 'Dr' } },
        ),
      });
      expect(same.status).toBe(200);
      expect(await app.dataSource.query('SELECT count(*)::int AS n FROM audit_events')).toEqual([
        { n: auditBefore },
      ]);
      expect(await app.dataSource.query('SELECT count(*)::int AS n FROM change_events')).toEqual([
        { n: eventsBefore },
      ]);
    });

    it('applies every documented path, path-less objects with dotted keys or nested objects, and removes', async () => {
      const { id } = await createJane();
      const patch = async (...operations: unknown[]) => {
        const res = await scim({ method: 'PATCH', path: `/Users/${id}`, body: patchBody(...operations) });
        expect(res.status).toBe(200);
        return res.body;
      };
      expect(await patch({ op: 'replace', path: 'name.familyName', value: 'Smith' })).toMatchObject({
        name: { givenName: 'Jane', familyName: 'Smith' },
      });
      expect(await patch({ op: 'replace', path: 'name', value: { givenName: 'Janet' } })).toMatchObject({
        name: { givenName: 'Janet', familyName: 'Smith' },
      });
      expect(
        await patch({ op: 'replace', value: { name: { familyName: 'Doe' }, displayName: 'JD' } }),
      ).toMatchObject({
        name: { givenName: 'Janet', familyName: 'Doe' },
        displayName: 'JD',
      });
      expect(
        await patch({ op: 'add', path: 'emails[primary eq true].value', value: 'jd@uni.edu' }),
      ).toMatchObject({
        emails: [{ value: 'jd@uni.edu' }],
      });
      expect(
        await patch({ op: 'replace', path: 'emails', value: [{ value: 'p@uni.edu', primary: true }] }),
      ).toMatchObject({
        emails: [{ value: 'p@uni.edu' }],
      });
      expect(await patch({ op: 'replace', path: 'externalId', value: 'new-ext' })).toMatchObject({
        externalId: 'new-ext',
      });
      expect(await patch({ op: 'replace', path: 'userName', value: 'janet.doe@uni.edu' })).toMatchObject({
        userName: 'janet.doe@uni.edu',
      });
      const removed = await patch(
        { op: 'remove', path: 'displayName' },
        { op: 'Remove', path: 'name.givenName' },
        { op: 'remove', path: 'externalId' },
      );
      expect(removed).not.toHaveProperty('displayName');
      expect(removed).not.toHaveProperty('externalId');
      expect(removed.name).toEqual({ familyName: 'Doe', formatted: 'Doe' });
      expect(await patch({ op: 'remove', path: 'name' })).not.toHaveProperty('name');
      // Paths the service does not keep change nothing.
      expect(
        await patch(
          {
            op: 'add',
            path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
            value: 'CS',
          },
          { op: 'replace', path: 'emails[type eq "home"].value', value: 'home@x.org' },
          { op: 'add', path: 'phoneNumbers[type eq "work"].value', value: '123' },
        ),
      ).toMatchObject({ emails: [{ value: 'p@uni.edu' }] });
      const noEmail = await scim({
        method: 'PATCH',
        path: `/Users/${id}`,
        body: patchBody({ op: 'remove', path: 'emails' }),
      });
      expect(noEmail.body).toEqual(
        scimError(400, 'A user needs an email address (emails[].value)', 'invalidValue'),
      );
    });

    it('deletes with 204 and an empty body, like DELETE /api/users/{id}', async () => {
      const { id } = await createJane();
      const res = await scim({ method: 'DELETE', path: `/Users/${id}` });
      expect(res.status).toBe(204);
      expect(res.body).toBeUndefined();
      expect(await app.dataSource.query('SELECT id FROM users WHERE id = $1', [id])).toEqual([]);
      expect((await scim({ method: 'DELETE', path: `/Users/${id}` })).status).toBe(404);
    });

    it('never undoes an admin deactivation committed while a SCIM rename waits: renamed and inactive', async () => {
      const { id } = await createJane();
      const admin = await makeUser(app.dataSource, { admin: true });
      const holder = new pg.Client({ connectionString: testDatabaseUrl() });
      await holder.connect();
      const lockWaiters = async () => {
        const [{ n }] = await app.dataSource.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return n;
      };
      try {
        // Another session holds the row: the admin's deactivation queues first, the SCIM rename behind it.
        await holder.query('BEGIN');
        await holder.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [id]);
        const deactivation = request(app.url, 'PUT', `/api/users/${id}`, {
          token: tokenFor(admin),
          body: { active: false },
        });
        await waitFor(async () => (await lockWaiters()) === 1, { what: 'the deactivation waiting' });
        const rename = scim({
          method: 'PATCH',
          path: `/Users/${id}`,
          body: patchBody({ op: 'replace', path: 'userName', value: 'jane.smith@uni.edu' }),
        });
        await waitFor(async () => (await lockWaiters()) === 2, { what: 'the rename waiting behind it' });
        await holder.query('COMMIT');
        expect((await deactivation).status).toBe(200);
        expect((await rename).status).toBe(200);
      } finally {
        await holder.end();
      }
      expect(await app.dataSource.query('SELECT username, active FROM users WHERE id = $1', [id])).toEqual([
        { username: 'jane.smith@uni.edu', active: false },
      ]);
      const audit = await app.dataSource.query<{ summary: Record<string, unknown> }[]>(
        `SELECT summary FROM audit_events WHERE action = 'user.update' ORDER BY id`,
      );
      expect(audit.map((entry) => Object.keys(entry.summary).sort())).toEqual([
        ['active'],
        ['token_id', 'username', 'via'],
      ]);
    });

    it('takes the email rule of the user routes: an address on a one-label domain (admin@localhost)', async () => {
      const res = await scim({
        method: 'POST',
        path: '/Users',
        body: { userName: 'ops', emails: [{ value: 'ops@localhost' }] },
      });
      expect(res.status).toBe(201);
      expect(res.body.emails).toEqual([{ value: 'ops@localhost', type: 'work', primary: true }]);
      const replaced = await scim({
        method: 'PUT',
        path: `/Users/${String(res.body.id)}`,
        body: { userName: 'ops', emails: [{ value: 'root@localhost' }] },
      });
      expect(replaced.body.emails).toEqual([{ value: 'root@localhost', type: 'work', primary: true }]);
    });

    it('reads and lists administrators but refuses to PUT, PATCH or DELETE one (403), changing nothing', async () => {
      const admin = await makeUser(app.dataSource, {
        username: 'admin',
        email: 'admin@localhost',
        admin: true,
      });
      const id = String(admin.id);
      const read = await scim({ method: 'GET', path: `/Users/${id}` });
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ id, userName: 'admin', active: true });
      const listed = await scim({ method: 'GET', path: '/Users?filter=userName%20eq%20%22admin%22' });
      expect(listed.body.Resources.map((r: { id: string }) => r.id)).toEqual([id]);
      const rowOf = async () =>
        app.dataSource.query('SELECT username, email, external_id, active, admin FROM users WHERE id = $1', [
          id,
        ]);
      const before = await rowOf();
      const forbidden = scimError(403, 'Administrators are managed in the service, not through SCIM');
      // The takeovers: the bootstrap admin renamed to an attacker's IdP username, an admin re-keyed to their oid.
      for (const call of [
        { method: 'PATCH', body: patchBody({ op: 'replace', path: 'userName', value: 'attacker@uni.edu' }) },
        { method: 'PATCH', body: patchBody({ op: 'replace', path: 'externalId', value: 'attacker-oid' }) },
        { method: 'PATCH', body: patchBody({ op: 'replace', value: { active: false } }) },
        { method: 'PATCH', body: patchBody({ op: 'replace', path: 'displayName', value: 'Admin' }) },
        { method: 'PUT', body: { userName: 'admin', emails: [{ value: 'admin@uni.edu' }], active: false } },
        { method: 'DELETE' },
      ] as const) {
        const res = await scim({ ...call, path: `/Users/${id}` });
        expect({ method: call.method, status: res.status, body: res.body }).toEqual({
          method: call.method,
          status: 403,
          body: forbidden,
        });
      }
      expect(await rowOf()).toEqual(before);
      expect(await app.dataSource.query('SELECT action FROM audit_events')).toEqual([]);
      expect(await app.dataSource.query('SELECT type FROM change_events')).toEqual([]);
      // Validation (400) and existence (404) come first, as everywhere.
      const bad = await scim({
        method: 'PATCH',
        path: `/Users/${id}`,
        body: patchBody({ op: 'replace', path: 'active', value: 'maybe' }),
      });
      expect(bad.body).toEqual(scimError(400, 'active must be a boolean', 'invalidValue'));
      const badPut = await scim({ method: 'PUT', path: `/Users/${id}`, body: { userName: 'admin' } });
      expect(badPut.status).toBe(400);
    });
  });

  describe('the OpenAPI document', () => {
    it('documents the SCIM routes with SCIM bodies and errors, not the envelope', async () => {
      const document = (await request(app.url, 'GET', '/api/docs-json')).body;
      const users = document.paths['/api/scim/v2/Users/{id}'];
      expect(Object.keys(users).sort()).toEqual(['delete', 'get', 'patch', 'put']);
      expect(Object.keys(users.get.responses['200'].content)).toEqual([SCIM_CONTENT_TYPE]);
      expect(users.get.responses['404'].content[SCIM_CONTENT_TYPE].schema).toEqual({
        $ref: '#/components/schemas/ScimError',
      });
      expect(document.paths['/api/scim/v2/Users'].post.responses['201']).toBeDefined();
      expect(document.components.schemas.ScimUser.required).toContain('userName');
      expect(JSON.stringify(document.paths['/api/scim/v2/Users'])).not.toContain('ErrorEnvelope');
      expect(document.info.description).toContain('docs/provisioning.md');
    });
  });

  describe('Groups and the rest', () => {
    it('lists no groups, and answers 501 for other /Groups paths, /Bulk and /Me; 404 elsewhere', async () => {
      const groups = await scim({ method: 'GET', path: '/Groups' });
      expect(groups.body).toEqual({
        schemas: [LIST_SCHEMA],
        totalResults: 0,
        startIndex: 1,
        itemsPerPage: 0,
        Resources: [],
      });
      for (const call of [
        { method: 'POST', path: '/Groups', body: { displayName: 'Staff' } },
        { method: 'GET', path: '/Groups/1' },
        { method: 'PATCH', path: '/Groups/1', body: patchBody({ op: 'add', path: 'members', value: [] }) },
        { method: 'POST', path: '/Bulk', body: { Operations: [] } },
        { method: 'GET', path: '/Me' },
      ] as const) {
        const res = await scim(call);
        expect({ path: call.path, status: res.status, schemas: res.body.schemas }).toEqual({
          path: call.path,
          status: 501,
          schemas: scimError(501, '').schemas,
        });
      }
      const unknown = await scim({ method: 'GET', path: '/Widgets' });
      expect(unknown.body).toEqual(scimError(404, 'Route not found'));
    });
  });
});

describe('SCIM switched off (SCIM_ENABLED unset)', () => {
  const { app } = useTestApp();

  it('leaves the SCIM routes out of the OpenAPI document', async () => {
    const document = (await request(app.url, 'GET', '/api/docs-json')).body;
    expect(Object.keys(document.paths).filter((path) => path.includes('scim'))).toEqual([]);
  });

  it('answers every SCIM path 404 Route not found in the envelope', async () => {
    await app.dataSource.query('TRUNCATE integration_tokens');
    const token = await makeScimToken(app.dataSource);
    for (const path of ['/Users', '/ServiceProviderConfig', '/Groups', '/Users/1']) {
      const res = await request(app.url, 'GET', `${SCIM}${path}`, { token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, data: null, message: 'Route not found' });
    }
  });
});

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
    expect: (res) => {
      expect(res.status).toBe(409);
      expect(res.body.scimType).toBe('uniqueness');
    },
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
  {
    name: 'Deactivate Users (path-less replace of active)',
    method: 'PATCH',
    path: '/Users/{id}',
    body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', value: { active: false } }] },
    expect: (res) => {
      expect(res.status).toBe(200);
      expect(res.body.active).toBe(false);
    },
  },
  {
    name: 'Okta reads the deactivated person back',
    method: 'GET',
    path: '/Users/{id}',
    expect: (res) => expect(res.body).toMatchObject({ active: false, name: { familyName: 'Doe-Smith' } }),
  },
  {
    name: 'Reactivate Users',
    method: 'PATCH',
    path: '/Users/{id}',
    body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', value: { active: true } }] },
    expect: (res) => {
      expect(res.status).toBe(200);
      expect(res.body.active).toBe(true);
    },
  },
];

describe('Okta provisioning, replayed (docs/provisioning.md)', () => {
  const { app } = useTestApp({ scimEnabled: true });
  const { scim } = useScimClient(app);

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
    await replay(scim, SPEC_TEST);
  });

  it('runs the lifecycle: create, update, deactivate (sign-in refused), reactivate (sign-in works again)', async () => {
    const seen: Record<string, string> = {};
    const signedIn = async () => {
      const user = { id: Number(seen.id), admin: false };
      return (await request(app.url, 'GET', '/api/auth/me', { token: tokenFor(user) })).status;
    };
    await replay(scim, LIFECYCLE.slice(0, 3), seen);
    expect(await signedIn()).toBe(200);
    await replay(scim, LIFECYCLE.slice(3, 5), seen);
    // Deactivated: every token of theirs is refused (at once on this replica).
    expect(await signedIn()).toBe(401);
    await replay(scim, LIFECYCLE.slice(5), seen);
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
});

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
        expect(res.body).toEqual({
          schemas: [LIST_SCHEMA],
          totalResults: 0,
          startIndex: 1,
          itemsPerPage: 0,
          Resources: [],
        });
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
      expect: (res) => {
        expect(res.status).toBe(409);
        expect(res.body.scimType).toBe('uniqueness');
      },
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
      body: {
        schemas: [PATCH_SCHEMA],
        Operations: [
          { op: op('Replace'), path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
          { op: op('Replace'), path: 'name.familyName', value: 'updatedFamilyName' },
        ],
      },
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
      body: {
        schemas: [PATCH_SCHEMA],
        Operations: [
          { op: op('Replace'), path: 'userName', value: '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com' },
        ],
      },
      expect: (res) => expect(res.body.userName).toBe('5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com'),
    },
    flag
      ? {
          name: 'Update user: several attributes in one replace',
          method: 'PATCH',
          path: q('/Users/{id}'),
          body: {
            schemas: [PATCH_SCHEMA],
            Operations: [
              { op: 'replace', path: 'displayName', value: 'Given Updated' },
              { op: 'replace', path: 'name.givenName', value: 'Given' },
              { op: 'add', path: `${ENTERPRISE}:department`, value: 'Mathematics' },
            ],
          },
          expect: (res) =>
            expect(res.body).toMatchObject({ displayName: 'Given Updated', name: { givenName: 'Given' } }),
        }
      : {
          name: 'Update user: path-less Add with dotted keys',
          method: 'PATCH',
          path: q('/Users/{id}'),
          body: {
            schemas: [PATCH_SCHEMA],
            Operations: [
              {
                op: 'Add',
                value: {
                  displayName: 'Given Updated',
                  'name.givenName': 'Given',
                  'emails[type eq "work"].value': 'updatedEmail@microsoft.com',
                  [`${ENTERPRISE}:department`]: 'Mathematics',
                },
              },
            ],
          },
          expect: (res) =>
            expect(res.body).toMatchObject({ displayName: 'Given Updated', name: { givenName: 'Given' } }),
        },
    {
      name: 'The 40-minute re-sync: the same values again change nothing',
      method: 'PATCH',
      path: q('/Users/{id}'),
      body: {
        schemas: [PATCH_SCHEMA],
        Operations: [
          { op: op('Replace'), path: 'active', value: bool(true) },
          { op: op('Replace'), path: 'emails[type eq "work"].value', value: 'UpdatedEmail@microsoft.com' },
          { op: op('Replace'), path: 'name.familyName', value: 'updatedFamilyName' },
        ],
      },
      expect: (res) => expect(res.status).toBe(200),
    },
    {
      name: 'Disable user',
      method: 'PATCH',
      path: q('/Users/{id}'),
      body: {
        schemas: [PATCH_SCHEMA],
        Operations: [{ op: op('Replace'), path: 'active', value: bool(false) }],
      },
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

describe('Microsoft Entra ID provisioning, replayed (docs/provisioning.md)', () => {
  let idp: TestIdp;
  const settings: Parameters<typeof useTestApp>[0] = { scimEnabled: true };
  beforeAll(async () => {
    idp = await TestIdp.start();
    settings.oidc = {
      issuer: idp.issuer,
      audience: TEST_AUDIENCE,
      usernameClaim: 'preferred_username',
      createUsers: true,
      clientId: undefined,
      scopes: ['openid', 'profile', 'email'],
      maxTokenAgeS: 86_400,
      refetchCooldownMs: 30_000,
    };
  });
  afterAll(() => idp?.stop());
  const { app, api } = useTestApp(settings);
  const { scim } = useScimClient(app);

  const counts = async () =>
    (
      await app.dataSource.query(
        `SELECT (SELECT count(*)::int FROM audit_events) AS audit, (SELECT count(*)::int FROM change_events) AS events`,
      )
    )[0] as { audit: number; events: number };

  it('passes its calls with aadOptscim062020 in the tenant URL', async () => {
    await replay(scim, entraSequence(true));
  });

  it('passes its calls without aadOptscim062020 (capitalised ops, "False", path-less dotted keys)', async () => {
    await replay(scim, entraSequence(false));
  });

  it('writes no audit event and no change event for its periodic re-send of unchanged values', async () => {
    // Test Connection, the GUID probe, the lookup and the create.
    await replay(scim, entraSequence(true).slice(0, 4));
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
      body: {
        schemas: [PATCH_SCHEMA],
        Operations: [
          { op: 'replace', path: 'emails[type eq "work"].value', value: 'updatedemail@microsoft.com' },
          { op: 'replace', path: 'name.familyName', value: 'updatedFamilyName' },
        ],
      },
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
});
