// Part of test/exports.e2e-spec.ts: who may export.
import { tokenFor } from '../../support/factories.js';
import { failure } from '../../support/http.js';
import { makeIntegrationToken } from '../../support/token-fixtures.js';
import { CANVAS, type ExportsContext, ONEROSTER } from './context.js';

export function exportAccess(ctx: ExportsContext): void {
  const { api, given, get, ds } = ctx;

  describe('who may export', () => {
    it('lets an exports token through on both routes, and nowhere else', async () => {
      const { token } = await makeIntegrationToken(ds(), ['exports']);
      for (const path of [ONEROSTER, CANVAS])
        expect((await get(`${path}?year=2026`, token)).status).toBe(200);
      const elsewhere = await api.get('/api/users', { token });
      expect(elsewhere.status).toBe(401);
      expect(elsewhere.body.message).toBe('Invalid or expired token');
      expect((await api.get('/api/events', { token })).status).toBe(401);
    });

    it('refuses events and scim tokens (401), users who are not admins (403) and callers without a token', async () => {
      for (const scopes of [['events'], ['scim'], ['scim', 'events']]) {
        const { token } = await makeIntegrationToken(ds(), scopes);
        const res = await api.get(`${ONEROSTER}?year=2026`, { token });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(failure('Invalid or expired token'));
      }
      const res = await api.get(`${CANVAS}?year=2026`, { token: tokenFor(given.year.lecturer) });
      expect(res.body).toEqual(failure('You do not have permission to perform this action'));
      expect((await api.get(`${CANVAS}?year=2026`)).status).toBe(401);
    });

    it('creates a token with the exports scope', async () => {
      const res = await api.post('/api/tokens', {
        token: given.adminToken,
        body: { name: 'LMS nightly', scopes: ['exports'] },
      });
      expect(res.status).toBe(201);
      expect(res.body.data.scopes).toEqual(['exports']);
    });
  });
}
