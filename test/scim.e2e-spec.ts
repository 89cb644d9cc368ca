import { useTestApp } from './support/app.js';
import { makeUser, tokenFor } from './support/factories.js';
import { request } from './support/http.js';
import { makeIntegrationToken } from './support/token-fixtures.js';
import {
  LIST_SCHEMA,
  makeScimToken,
  PATCH_SCHEMA,
  SCIM,
  SCIM_CONTENT_TYPE,
  scimError,
  USER_SCHEMA,
  useScimClient,
} from './support/scim.js';

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
