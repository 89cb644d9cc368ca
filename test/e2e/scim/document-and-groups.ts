// Part of test/scim.e2e-spec.ts: the OpenAPI document, and Groups and the rest.
import { request } from '../../support/http.js';
import { emptyListResponse, patchBody, SCIM_CONTENT_TYPE, scimError } from '../../support/scim.js';
import { type ScimContext } from './context.js';

export function documentAndGroupsTests(ctx: ScimContext): void {
  const { app, scim } = ctx;

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
      expect(groups.body).toEqual(emptyListResponse());
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
}
