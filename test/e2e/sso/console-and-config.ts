// Part of test/sso.e2e-spec.ts: the Swagger UI console with OIDC_CLIENT_ID, and GET /api/auth/config.
import { CONSOLE_CLIENT_ID } from '../../support/idp.js';
import { type SsoContext } from './context.js';

export function consoleAndConfigTests(ctx: SsoContext): void {
  const { api, idp } = ctx;

  describe('the Swagger UI console with OIDC_CLIENT_ID', () => {
    it('documents the IdP as an openIdConnect scheme beside bearer on every protected operation', async () => {
      const document = (await api.get('/api/docs-json')).body;
      expect(document.components.securitySchemes.sso).toEqual({
        type: 'openIdConnect',
        openIdConnectUrl: `${idp.issuer}/.well-known/openid-configuration`,
        description: expect.stringContaining(`Sign in with ${new URL(idp.issuer).host}`),
      });
      expect(document.paths['/api/auth/me'].get.security).toEqual([{ bearer: [] }, { sso: [] }]);
      expect(document.paths['/api/auth/config'].get.security).toEqual([]);
      const init = await api.get('/api/docs/swagger-ui-init.js');
      expect(init.body).toContain(`"clientId":"${CONSOLE_CLIENT_ID}"`);
      expect(init.body).toContain('"usePkceWithAuthorizationCodeGrant":true');
    });

    it("relaxes COOP and connect-src for the IdP's origin on the docs pages only", async () => {
      const page = await api.get('/api/docs');
      expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin-allow-popups');
      expect(page.headers.get('content-security-policy')).toContain(`connect-src 'self' ${idp.issuer}`);
      const redirect = await api.get('/api/docs/oauth2-redirect.html');
      expect(redirect.status).toBe(200);
      expect(redirect.body).toContain('oauth2-redirect.js');
      expect(redirect.headers.get('cross-origin-opener-policy')).toBeNull();
      expect(redirect.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect((await api.get('/api/docs/oauth2-redirect.js')).status).toBe(200);
      for (const path of ['/api/health', '/api/docs-json', '/api/auth/config']) {
        const res = await api.get(path);
        expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
        expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      }
    });
  });

  describe('GET /api/auth/config', () => {
    it('names the IdP and its endpoints from discovery, without a token', async () => {
      const res = await api.get('/api/auth/config');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'Sign-in options retrieved successfully',
        data: {
          password_login: true,
          sso: {
            issuer: idp.issuer,
            client_id: CONSOLE_CLIENT_ID,
            scopes: ['openid', 'profile', 'email'],
            authorization_endpoint: `${idp.issuer}/auth`,
            token_endpoint: `${idp.issuer}/token`,
          },
        },
      });
    });
  });
}
