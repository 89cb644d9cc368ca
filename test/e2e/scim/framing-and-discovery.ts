// Part of test/scim.e2e-spec.ts: framing, authentication and scope, and discovery.
import { makeUser, tokenFor } from '../../support/factories.js';
import { request } from '../../support/http.js';
import {
  LIST_SCHEMA,
  PATCH_SCHEMA,
  patchBody,
  SCIM,
  SCIM_CONTENT_TYPE,
  scimError,
  USER_SCHEMA,
} from '../../support/scim.js';
import { makeIntegrationToken } from '../../support/token-fixtures.js';
import { jane, type ScimContext } from './context.js';

export function framingAndDiscoveryTests(ctx: ScimContext): void {
  const { app, scim, token } = ctx;

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
      const patchUnknown = (body: unknown) => scim({ method: 'PATCH', path: '/Users/999999', body });
      const missing = await patchUnknown({ schemas: [PATCH_SCHEMA] });
      expect(missing.body).toEqual(
        scimError(400, 'Operations must be an array of 1-100 operations', 'invalidSyntax'),
      );
      const unknownOp = await patchUnknown(patchBody({ op: 'merge', path: 'displayName', value: 'x' }));
      expect(unknownOp.status).toBe(400);
      expect(unknownOp.body.scimType).toBe('invalidSyntax');
      const badPath = await patchUnknown(patchBody({ op: 'replace', path: 'emails[type eq', value: 'x' }));
      expect(badPath.status).toBe(400);
      expect(badPath.body.scimType).toBe('invalidPath');
      const badValue = await patchUnknown(patchBody({ op: 'replace', path: 'active', value: 'maybe' }));
      expect(badValue.body).toEqual(scimError(400, 'active must be a boolean', 'invalidValue'));
      const notFound = await patchUnknown(patchBody({ op: 'replace', path: 'active', value: false }));
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
}
