import { startTestApp, type TestApp, useTestApp } from './support/app.js';
import { client } from './support/http.js';

const API_CSP = "default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'";

/** Parses a CSP header into directive → sources. */
function directives(header: string | null): Record<string, string[]> {
  return Object.fromEntries(
    (header ?? '')
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name, sources]),
  );
}

function expectCommonHeaders(headers: Headers) {
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('x-frame-options')).toBe('DENY');
  expect(headers.get('referrer-policy')).toBe('no-referrer');
  expect(headers.get('strict-transport-security')).toMatch(/^max-age=\d+/);
  expect(headers.get('cross-origin-opener-policy')).toBe('same-origin');
  expect(headers.get('x-powered-by')).toBeNull();
}

describe('security headers', () => {
  const { app, api } = useTestApp();

  it.each([
    ['a public route', 'GET', '/api/health', undefined],
    ['a refused request', 'GET', '/api/modules', undefined],
    ['an unknown route', 'GET', '/api/nowhere', undefined],
    ['a malformed JSON body', 'POST', '/api/auth/login', '{"username":'],
    ['an unsupported content type', 'POST', '/api/auth/login', 'plain'],
    ['the OpenAPI document', 'GET', '/api/docs-json', undefined],
  ])('puts the strict API policy on %s', async (_name, method, path, body) => {
    const res = await api.request(method, path, {
      body,
      headers: body === 'plain' ? { 'content-type': 'text/plain' } : {},
    });
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get('content-security-policy')).toBe(API_CSP);
    expectCommonHeaders(res.headers);
  });

  it.each(['/api/docs', '/api/docs/', '/api/docs/swagger-ui-bundle.js', '/api/docs/swagger-ui.css'])(
    'relaxes the policy on %s only as far as Swagger UI needs',
    async (path) => {
      const res = await api.get(path);
      expect(res.status).toBe(200);
      const csp = directives(res.headers.get('content-security-policy'));
      expect(csp['default-src']).toEqual(["'self'"]);
      expect(csp['script-src']).toEqual(["'self'"]);
      expect(csp['style-src']).toEqual(["'self'"]);
      expect(csp['connect-src']).toEqual(["'self'"]);
      expect(csp['img-src']).toEqual(["'self'", 'data:', 'blob:']);
      expect(csp['object-src']).toEqual(["'none'"]);
      expect(csp['frame-ancestors']).toEqual(["'none'"]);
      expect(res.headers.get('content-security-policy')).not.toMatch(/unsafe-(inline|eval)|\*|https?:/);
      expectCommonHeaders(res.headers);
    },
  );

  it('serves a docs page with no inline script or style, so the policy needs no unsafe-inline', async () => {
    for (const path of ['/api/docs', '/api/docs/']) {
      const res = await api.get<string>(path);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const scripts = [...res.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts.length).toBeGreaterThan(0);
      for (const [, attributes, content] of scripts) {
        expect(attributes).toMatch(/\ssrc="/);
        expect(content.trim()).toBe('');
      }
      expect(res.body).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
      // Every file the page refers to is served from the docs routes.
      for (const [, ref] of res.body.matchAll(/(?:src|href)="([^"]+)"/g)) {
        const asset = await api.get(new URL(ref, `${app.url}${path}`).pathname);
        expect(asset.status).toBe(200);
      }
    }
  });

  describe('with SWAGGER_ENABLED=false', () => {
    let plain: TestApp;

    beforeAll(async () => {
      plain = await startTestApp({ swaggerEnabled: false });
    });
    afterAll(() => plain.close());

    it('serves no docs and still sends the headers', async () => {
      for (const path of ['/api/docs', '/api/docs-json', '/api/docs/swagger-ui-bundle.js']) {
        const res = await client(plain.url).get(path);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ success: false, data: null, message: 'Route not found' });
        expect(res.headers.get('content-security-policy')).toBe(API_CSP);
      }
    });
  });
});
