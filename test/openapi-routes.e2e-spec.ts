import { type OpenAPIObject, type ParameterObject, type ResponseObject } from '@nestjs/swagger';
import { startTestApp, type TestApp } from './support/app.js';
import { ModuleRole } from '../src/course-modules/membership/module-role.js';
import { assignRole, makeModule, makeUser, tokenFor } from './support/factories.js';
import { client, type Client } from './support/http.js';
import {
  deref,
  type DocOperation,
  fetchDocument,
  operationsOf,
  routeKey,
  servedRoutes,
} from './support/openapi.js';
import { multipartBody } from './support/openapi-requests.js';

/** Who may call a route, from docs/api.md §2, §4, §5 and §6. */
type Access = 'public' | 'authenticated' | 'admin' | 'module';

const ACCESS: Record<string, Access> = {
  'POST /api/auth/login': 'public',
  'GET /api/auth/config': 'public',
  'GET /api/auth/me': 'authenticated',
  'PUT /api/auth/password': 'authenticated',
  'GET /api/health': 'public',
  'GET /api/health/ready': 'public',
  'GET /api/modules': 'authenticated',
  'GET /api/modules/me': 'authenticated',
  'POST /api/modules': 'admin',
  'DELETE /api/modules/bulk': 'admin',
  'POST /api/modules/rollover': 'admin',
  'GET /api/modules/{module_id}': 'module',
  'PUT /api/modules/{module_id}': 'admin',
  'DELETE /api/modules/{module_id}': 'admin',
  'GET /api/modules/{module_id}/personnel': 'module',
  'GET /api/modules/{module_id}/personnel/eligible': 'module',
  'POST /api/modules/{module_id}/personnel': 'module',
  'DELETE /api/modules/{module_id}/personnel': 'module',
  'GET /api/modules/{module_id}/students': 'module',
  'POST /api/modules/{module_id}/students': 'module',
  'DELETE /api/modules/{module_id}/students': 'module',
  'PATCH /api/modules/{module_id}/members': 'module',
  'GET /api/users': 'admin',
  'POST /api/users': 'admin',
  'POST /api/users/bulk': 'admin',
  'GET /api/users/{user_id}': 'admin',
  'PUT /api/users/{user_id}': 'admin',
  'DELETE /api/users/{user_id}': 'admin',
  'DELETE /api/users/{user_id}/sso-binding': 'admin',
  'GET /api/users/{user_id}/modules': 'admin',
  'PUT /api/users/{user_id}/avatar': 'admin',
  'GET /api/users/{user_id}/avatar': 'authenticated',
  'POST /api/users/import': 'admin',
  'GET /api/users/export.csv': 'admin',
  'POST /api/modules/{module_id}/roster/import': 'module',
  'GET /api/modules/{module_id}/roster.csv': 'module',
  'GET /api/audit': 'admin',
  'GET /api/webhooks': 'admin',
  'POST /api/webhooks': 'admin',
  'GET /api/webhooks/{webhook_id}': 'admin',
  'PUT /api/webhooks/{webhook_id}': 'admin',
  'DELETE /api/webhooks/{webhook_id}': 'admin',
  'POST /api/webhooks/{webhook_id}/test': 'admin',
  'GET /api/webhooks/{webhook_id}/deliveries': 'admin',
  'GET /api/events': 'admin',
  'GET /api/tokens': 'admin',
  'POST /api/tokens': 'admin',
  'DELETE /api/tokens/{token_id}': 'admin',
};

/** Routes that take a request body besides POST and PUT. */
const DELETE_WITH_BODY = new Set([
  'DELETE /api/modules/bulk',
  'DELETE /api/modules/{module_id}/personnel',
  'DELETE /api/modules/{module_id}/students',
]);

/** POST routes that take no request body: an action on the addressed resource. */
const POST_WITHOUT_BODY = new Set(['POST /api/webhooks/{webhook_id}/test']);

const PERMISSION_DENIED = 'You do not have permission to perform this action';

const sorted = (values: Iterable<string>) => [...values].sort();

describe('OpenAPI route table', () => {
  let app: TestApp;
  let api: Client;
  let document: OpenAPIObject;
  let operations: DocOperation[];

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.url);
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

    it('knows the access rule of every served route from the contract', () => {
      expect(sorted(servedRoutes(app.service.app)).filter((r) => !(r in ACCESS))).toEqual([]);
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
          const access = ACCESS[key];
          if (access === 'public') {
            return operation.security?.some((s) => 'bearer' in s) ? [`${key}: public but marked bearer`] : [];
          }
          const found: string[] = [];
          if (!operation.security?.some((s) => 'bearer' in s)) found.push(`${key}: no bearer security`);
          if (!operation.responses['401']) found.push(`${key}: no 401 response`);
          if ((access === 'admin' || access === 'module') && !operation.responses['403']) {
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

  describe('closed by default', () => {
    let ids: { module: number; user: number };
    let tokens: { member: string; outsider: string };

    beforeAll(async () => {
      await app.reset();
      const module = await makeModule(app.dataSource);
      const member = await makeUser(app.dataSource);
      const outsider = await makeUser(app.dataSource);
      await assignRole(app.dataSource, member.id, module.id, ModuleRole.Lecturer);
      ids = { module: module.id, user: member.id };
      tokens = { member: tokenFor(member), outsider: tokenFor(outsider) };
    });

    /** A request that passes validation, so only authentication and access can refuse it. */
    async function call(key: string, token?: string) {
      const [method, template] = key.split(' ');
      const path = template.replace('{module_id}', String(ids.module)).replace('{user_id}', String(ids.user));
      if (key === 'PUT /api/users/{user_id}/avatar') {
        const { body, contentType } = multipartBody();
        const response = await fetch(app.url + path, {
          method,
          body,
          headers: { 'content-type': contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) },
        });
        return { status: response.status, body: await response.json() };
      }
      if (template.endsWith('/import')) {
        const csv = template.includes('roster')
          ? 'user,role\nnobody,Student\n'
          : 'username,email\nann,a@b.cd\n';
        return api.request(method, path, { token, body: csv, headers: { 'content-type': 'text/csv' } });
      }
      const body =
        method === 'GET'
          ? undefined
          : /\/(personnel|students)$/.test(template)
            ? { user_ids: [ids.user], ...(template.endsWith('personnel') ? { role: 'Tutor' } : {}) }
            : template.endsWith('/members')
              ? { user_ids: [ids.user], status: 'completed' }
              : {};
      return api.request(method, path, { token, body });
    }

    it('answers 401 Authentication required on every route but the public ones', async () => {
      const open: string[] = [];
      for (const key of sorted(servedRoutes(app.service.app))) {
        if (ACCESS[key] === 'public') continue;
        const res = await call(key);
        if (res.status !== 401 || res.body?.message !== 'Authentication required') {
          open.push(`${key} → ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
      expect(open).toEqual([]);
    });

    it('answers 401 Invalid or expired token to a forged token', async () => {
      const forged = tokenFor(
        { id: ids.user, admin: true },
        { secret: 'another-secret-that-is-long-enough-0123456789' },
      );
      const open: string[] = [];
      for (const key of sorted(servedRoutes(app.service.app))) {
        if (ACCESS[key] === 'public') continue;
        const res = await call(key, forged);
        if (res.status !== 401 || res.body?.message !== 'Invalid or expired token') {
          open.push(`${key} → ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
      expect(open).toEqual([]);
    });

    it('answers 403 to a non-admin on admin-only routes, and to an outsider on module-scoped ones', async () => {
      const open: string[] = [];
      for (const key of sorted(servedRoutes(app.service.app))) {
        const access = ACCESS[key];
        if (access !== 'admin' && access !== 'module') continue;
        // Admin-only routes refuse even a Lecturer of the module; module routes refuse a user with no role in it.
        const res = await call(key, access === 'admin' ? tokens.member : tokens.outsider);
        if (res.status !== 403 || res.body?.message !== PERMISSION_DENIED) {
          open.push(`${key} → ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
      expect(open).toEqual([]);
    });
  });
});
