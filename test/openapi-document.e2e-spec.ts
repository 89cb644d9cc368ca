// The OpenAPI document: its routes against the served ones, the security headers, every body example.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import { type OpenAPIObject, type ParameterObject, type ResponseObject } from '@nestjs/swagger';
import { startTestApp, type TestApp, useTestApp } from './support/app.js';
import { makeUser } from './support/factories.js';
import { client } from './support/http.js';
import { multipartBody, TINY_PNG } from './support/openapi-requests.js';
import {
  deref,
  type DocOperation,
  fetchDocument,
  operationsOf,
  routeKey,
  servedRoutes,
} from './support/openapi.js';
import { isRestricted, ROUTE_ACCESS, routeTableDrift } from './support/route-access.js';

/** Routes that take a request body besides POST and PUT. */
const DELETE_WITH_BODY = new Set([
  'DELETE /api/modules/bulk',
  'DELETE /api/modules/{module_id}/personnel',
  'DELETE /api/modules/{module_id}/students',
]);

/** POST routes that take no request body: an action on the addressed resource. */
const POST_WITHOUT_BODY = new Set(['POST /api/webhooks/{webhook_id}/test']);

const sorted = (values: Iterable<string>) => [...values].sort();

describe('OpenAPI route table', () => {
  let app: TestApp;
  let document: OpenAPIObject;
  let operations: DocOperation[];

  beforeAll(async () => {
    app = await startTestApp();
    document = await fetchDocument(app.url);
    operations = operationsOf(document);
  });
  afterAll(() => app.close());

  describe('the document and the router agree', () => {
    it('documents every route the application serves', () => {
      const documented = new Set(operations.map((o) => routeKey(o.method, o.path)));
      const undocumented = sorted(servedRoutes(app.service.app)).filter((r) => !documented.has(r));
      expect(undocumented).toEqual([]);
    });

    it('serves every operation the document lists', () => {
      const served = servedRoutes(app.service.app);
      const phantom = sorted(operations.map((o) => routeKey(o.method, o.path))).filter((r) => !served.has(r));
      expect(phantom).toEqual([]);
    });

    it('has a row in the route-access table for every served route, and no row for a route it lacks', () => {
      expect(routeTableDrift(servedRoutes(app.service.app))).toEqual({ missing: [], stale: [] });
    });
  });

  describe('every operation is complete', () => {
    const problems = (check: (operation: DocOperation, key: string) => string[]) =>
      operations.flatMap((o) => check(o, routeKey(o.method, o.path)));

    it('has a tag the document declares and a summary', () => {
      const declaredTags = new Set((document.tags ?? []).map((t) => t.name));
      expect(
        problems(({ operation }, key) => [
          ...(operation.tags?.length ? [] : [`${key}: no tag`]),
          ...(operation.tags ?? [])
            .filter((t) => !declaredTags.has(t))
            .map((t) => `${key}: undeclared tag ${t}`),
          ...(operation.summary?.trim() ? [] : [`${key}: no summary`]),
        ]),
      ).toEqual([]);
    });

    it('declares its success response, in the envelope unless it is a file', () => {
      expect(
        problems(({ operation }, key) => {
          const successes = Object.keys(operation.responses).filter((s) => /^2\d\d$/.test(s));
          if (successes.length === 0) return [`${key}: no 2xx response`];
          return successes.flatMap((status) => {
            const response = operation.responses[status] as ResponseObject;
            const content = response.content ?? {};
            const json = content['application/json']?.schema;
            if (!json) {
              const binary = Object.keys(content).some(
                (t) => t.startsWith('image/') || t === 'application/octet-stream' || t === 'text/csv',
              );
              return binary ? [] : [`${key} ${status}: neither JSON nor a file`];
            }
            const envelope = deref(document, json);
            const required = new Set(envelope.required ?? []);
            const missing = ['success', 'data', 'message'].filter(
              (p) => !envelope.properties?.[p] || !required.has(p),
            );
            return missing.length ? [`${key} ${status}: envelope lacks ${missing.join(', ')}`] : [];
          });
        }),
      ).toEqual([]);
    });

    it('declares bearer security with 401, and 403 where access is restricted', () => {
      expect(
        problems(({ operation }, key) => {
          const access = ROUTE_ACCESS[key];
          if (access === 'public') {
            return operation.security?.some((s) => 'bearer' in s) ? [`${key}: public but marked bearer`] : [];
          }
          const found: string[] = [];
          if (!operation.security?.some((s) => 'bearer' in s)) found.push(`${key}: no bearer security`);
          if (!operation.responses['401']) found.push(`${key}: no 401 response`);
          if (isRestricted(access) && !operation.responses['403']) {
            found.push(`${key}: no 403 response`);
          }
          return found;
        }),
      ).toEqual([]);
    });

    it('declares its path parameters as positive 64-bit integers, with a 400 for a bad one', () => {
      expect(
        problems(({ operation, path }, key) =>
          [...path.matchAll(/\{([^}]+)\}/g)].flatMap(([, name]) => {
            const parameter = (operation.parameters ?? [])
              .map((p) => deref<ParameterObject>(document, p))
              .find((p) => p.in === 'path' && p.name === name);
            if (!parameter) return [`${key}: path parameter ${name} not declared`];
            const schema = deref(document, parameter.schema ?? {});
            return [
              ...(parameter.required ? [] : [`${key}: ${name} not required`]),
              ...(schema.type === 'integer'
                ? []
                : [`${key}: ${name} is ${String(schema.type)}, not integer`]),
              ...(operation.responses['400'] ? [] : [`${key}: no 400 for a bad ${name}`]),
            ];
          }),
        ),
      ).toEqual([]);
    });

    it('declares a request body where the route takes one', () => {
      expect(
        problems(({ operation, method }, key) =>
          ((method === 'POST' && !POST_WITHOUT_BODY.has(key)) ||
            method === 'PUT' ||
            DELETE_WITH_BODY.has(key)) &&
          !operation.requestBody
            ? [`${key}: no request body`]
            : [],
        ),
      ).toEqual([]);
    });
  });
});

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

type Schema = {
  $ref?: string;
  example?: unknown;
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
};
interface Operation {
  parameters?: { in: string; name: string; schema?: Schema; example?: unknown }[];
  requestBody?: { content: Record<string, { schema: Schema; example?: unknown }> };
}

type Media = 'application/json' | 'text/csv' | 'multipart/form-data';
const JSON_BODY: Media = 'application/json';

/**
 * The request bodies Swagger UI offers in "Try it out", run as they are on a fresh installation (the admin is
 * user 1; the examples create user 2 `jsmith`, users 3 and 4 `adoe` and `bkhan`, and module 1 `CSC101`, which the
 * later examples and the path examples name). Each must pass validation and succeed, in the order an
 * administrator works. A CSV route runs twice, its example as the body and as the multipart part `file`; the
 * avatar, whose only body is a file to choose, gets a small PNG.
 */
const SESSION: [method: string, path: string, status: number, media?: Media][] = [
  ['post', '/api/auth/login', 200],
  ['post', '/api/users', 201],
  ['post', '/api/users/bulk', 201],
  ['post', '/api/modules', 201],
  ['put', '/api/modules/{module_id}', 200],
  ['post', '/api/modules/{module_id}/personnel', 200],
  ['post', '/api/modules/rollover', 201],
  ['delete', '/api/modules/{module_id}/personnel', 200],
  ['post', '/api/modules/{module_id}/students', 200],
  ['patch', '/api/modules/{module_id}/members', 200],
  ['delete', '/api/modules/{module_id}/students', 200],
  ['post', '/api/users/import', 201, 'text/csv'],
  ['post', '/api/users/import', 201, 'multipart/form-data'],
  ['post', '/api/modules/{module_id}/roster/import', 200, 'text/csv'],
  ['post', '/api/modules/{module_id}/roster/import', 200, 'multipart/form-data'],
  ['put', '/api/users/{user_id}/avatar', 200, 'multipart/form-data'],
  ['put', '/api/users/{user_id}', 200],
  ['put', '/api/users/{user_id}/sso-binding', 200],
  // The example token is no identity provider's (none is set up here): refused, as documented.
  ['post', '/api/auth/sso-binding', 401],
  ['delete', '/api/modules/bulk', 200],
  ['post', '/api/webhooks', 201],
  ['put', '/api/webhooks/{webhook_id}', 200],
  ['put', '/api/auth/password', 200],
  // Last: its answer's `token` is an integration token, which the steps above could not use.
  ['post', '/api/tokens', 201],
];

describe('the request examples of the OpenAPI document succeed on a fresh installation', () => {
  let app: TestApp;
  let document: {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, Schema> };
  };

  beforeAll(async () => {
    app = await startTestApp();
    document = (await client(app.url).get('/api/docs-json')).body;
  });
  afterAll(async () => {
    await app?.close();
  });

  /** What Swagger UI fills in: the schema's example, else one built from its properties' (or items') examples. */
  function sample(schema: Schema): unknown {
    if (schema.$ref) return sample(document.components.schemas[schema.$ref.split('/').pop()!]);
    if (schema.example !== undefined) return schema.example;
    if (schema.properties) {
      return Object.fromEntries(
        Object.entries(schema.properties).map(([name, property]) => [name, sample(property)]),
      );
    }
    if (schema.type === 'array' && schema.items) return [sample(schema.items)];
    throw new Error(`no example for ${JSON.stringify(schema)}`);
  }

  /** What Swagger UI sends for `media`: the JSON or CSV example, or a file part holding it (or a PNG). */
  function requestOf(operation: Operation, media: Media): { body: string | Uint8Array; contentType: string } {
    const content = operation.requestBody!.content;
    if (media === JSON_BODY) {
      return {
        body: JSON.stringify(content[media].example ?? sample(content[media].schema)),
        contentType: media,
      };
    }
    const csv = content['text/csv'];
    const text = csv ? String(csv.example ?? sample(csv.schema)) : undefined;
    if (media === 'text/csv') return { body: text!, contentType: media };
    const { body, contentType } = multipartBody([
      text
        ? { filename: 'example.csv', type: 'text/csv', content: Buffer.from(text) }
        : { filename: 'avatar.png', type: 'image/png', content: TINY_PNG },
    ]);
    return { body: new Uint8Array(body), contentType };
  }

  it('every request body has an example, and the session of examples succeeds step by step', async () => {
    const withBody = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        Object.keys(operation.requestBody?.content ?? {}).map((media) => `${method} ${path} ${media}`),
      ),
    );
    expect(SESSION.map(([method, path, , media = JSON_BODY]) => `${method} ${path} ${media}`).sort()).toEqual(
      withBody.sort(),
    );

    await app.dataSource.query(
      'TRUNCATE assignment_files, assignments, user_module_roles, modules, users, webhooks RESTART IDENTITY CASCADE',
    );
    const admin = await makeUser(app.dataSource, { username: 'admin', admin: true });
    expect(Number(admin.id)).toBe(1);

    let token = '';
    for (const [method, path, status, media = JSON_BODY] of SESSION) {
      const operation = document.paths[path][method];
      let url = path;
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'path') continue;
        url = url.replace(`{${parameter.name}}`, String(parameter.example ?? parameter.schema?.example));
      }
      const { body, contentType } = requestOf(operation, media);
      const response = await fetch(`${app.url}${url}`, {
        method: method.toUpperCase(),
        headers: { 'content-type': contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body,
      });
      const answer = (await response.json()) as { success: boolean; data?: { token?: string } };
      expect({
        step: `${method} ${url} (${media})`,
        body: typeof body === 'string' ? body : '(file)',
        status: response.status,
        answer,
      }).toMatchObject({
        status,
        answer: { success: status < 400 },
      });
      if (answer.data?.token) token = answer.data.token;
    }
  });
});
