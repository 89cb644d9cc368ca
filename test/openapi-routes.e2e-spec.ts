import { type OpenAPIObject, type ParameterObject, type ResponseObject } from '@nestjs/swagger';
import { startTestApp, type TestApp } from './support/app.js';
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
