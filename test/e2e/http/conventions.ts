// Part of test/http.e2e-spec.ts: the conventions of docs/api.md §1.
import { startTestApp, type UsedTestApp } from '../../support/app.js';
import { makeUser, tokenFor } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { client } from '../../support/http.js';
import { ROUTE_ACCESS } from '../../support/route-access.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * For every path of the route-access table, the methods it does not serve that no other route matches either
 * (`GET /api/modules/bulk` is `GET /api/modules/{module_id}`), with the path's ids filled in.
 */
function unservedMethods(): { method: string; path: string }[] {
  const routes = Object.keys(ROUTE_ACCESS).map((key) => {
    const [method, template] = key.split(' ');
    return { method, template, pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`) };
  });
  const paths = [...new Set(routes.map((r) => r.template.replace(/\{[^}]+\}/g, '1')))];
  return paths.flatMap((path) =>
    METHODS.filter((method) => !routes.some((r) => r.method === method && r.pattern.test(path))).map(
      (method) => ({ method, path }),
    ),
  );
}

/** docs/api.md §1: the envelope on every framework error, body framing, path ids. */
export function conventionTests({ app, api }: UsedTestApp): void {
  let token: string;
  beforeEach(async () => {
    ({ token } = await freshAdmin(app));
  });

  const error = (message: string) => ({ success: false, data: null, message });

  it('answers an unknown route with 404 Route not found, with or without a token', async () => {
    for (const res of [
      await api.get('/api/nope'),
      await api.get('/api/nope', { token }),
      await api.get('/elsewhere'),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual(error('Route not found'));
    }
  });

  it('answers 404 Route not found to a method a route does not serve, before access is checked', async () => {
    const member = tokenFor(await makeUser(app.dataSource));
    const wrong: string[] = [];
    let sent = 0;
    for (const { method, path } of unservedMethods()) {
      for (const caller of [member, undefined]) {
        const res = await api.request(method, path, {
          token: caller,
          body: method === 'GET' ? undefined : {},
        });
        sent++;
        if (res.status !== 404 || JSON.stringify(res.body) !== JSON.stringify(error('Route not found'))) {
          wrong.push(`${method} ${path} ${caller ? 'with' : 'without'} a token → ${res.status}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(sent).toBeGreaterThan(Object.keys(ROUTE_ACCESS).length);
  });

  it('answers malformed and empty JSON with 400 Malformed JSON body before authentication', async () => {
    for (const body of ['{"password": ', '{bad json}', '']) {
      const res = await api.put('/api/auth/password', {
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('Malformed JSON body'));
    }
  });

  it('answers a content type the route does not accept with 415 before authentication', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await api.put('/api/auth/password', {
        body: 'a=b',
        headers: { 'content-type': contentType },
      });
      expect(res.status).toBe(415);
      expect(res.body).toEqual(error('Unsupported content type'));
    }
  });

  it('answers a JSON body over 1 MiB with 413 before authentication', async () => {
    const body = JSON.stringify({ username: 'x'.repeat(1_048_576), password: 'y' });
    const res = await api.post('/api/auth/login', { body });
    expect(res.status).toBe(413);
    expect(res.body).toEqual(error('Request body too large'));
  });

  it('rejects a body that is not a JSON object', async () => {
    for (const body of ['[]', '"text"', '42', 'null', 'true']) {
      const res = await api.post('/api/auth/login', { body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('Request body must be a JSON object'));
    }
  });

  it('types body fields strictly and reports unknown properties last', async () => {
    const res = await api.put('/api/auth/password', {
      token,
      body: { zzz: 1, new_password: 123456789, aaa: 2, current_password: 'x' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      error(
        'Password must be 8-128 characters; property zzz should not exist; property aaa should not exist',
      ),
    );
  });

  it('refuses prototype pollution in JSON bodies', async () => {
    const res = await api.post('/api/auth/login', {
      body: '{"__proto__": {"admin": true}, "username": "a", "password": "b"}',
    });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.data).toBeNull();
  });

  it('answers every response with a request id, and keeps a well-formed one from the caller', async () => {
    const own = await api.get('/api/health', { headers: { 'x-request-id': 'abc-123' } });
    expect(own.headers.get('x-request-id')).toBe('abc-123');
    const fresh = await api.get('/api/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends no CORS headers by default, and answers allowed origins when CORS_ORIGINS is set', async () => {
    const origin = 'https://app.example.edu';
    const plain = await api.get('/api/health', { headers: { origin } });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();

    const withCors = await startTestApp({ corsOrigins: [origin] });
    try {
      const corsApi = client(withCors.url);
      const preflight = await corsApi.request('OPTIONS', '/api/modules', {
        headers: {
          origin,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      expect(preflight.status).toBeLessThan(300);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
      const other = await corsApi.get('/api/health', { headers: { origin: 'https://evil.example.com' } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await withCors.close();
    }
  });
}
