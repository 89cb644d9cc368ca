import { Ajv, type ValidateFunction } from 'ajv';
import formatsModule from 'ajv-formats';
import {
  type OpenAPIObject,
  type OperationObject,
  type ReferenceObject,
  type ResponseObject,
} from '@nestjs/swagger';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DOCS_JSON_PATH, DOCS_PATH } from '../../src/openapi/setup.js';
import { type ApiResponse, request, type RequestOptions } from './http.js';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

/** One operation of the document: `GET /api/modules/{module_id}`. */
export interface DocOperation {
  method: string;
  /** The path template as the document writes it, e.g. `/api/modules/{module_id}`. */
  path: string;
  operation: OperationObject;
}

export const routeKey = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

/** The docs themselves (UI page, its files, the JSON document) are not operations of the API. */
export function isDocsRoute(path: string): boolean {
  return path === DOCS_JSON_PATH || path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`);
}

export async function fetchDocument(baseUrl: string): Promise<OpenAPIObject> {
  const response = await request<OpenAPIObject>(baseUrl, 'GET', DOCS_JSON_PATH);
  if (response.status !== 200) throw new Error(`GET ${DOCS_JSON_PATH} answered ${response.status}`);
  return response.body;
}

export function operationsOf(document: OpenAPIObject): DocOperation[] {
  const operations: DocOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = (item as Record<string, OperationObject | undefined>)[method];
      if (operation) operations.push({ method: method.toUpperCase(), path, operation });
    }
  }
  return operations;
}

/**
 * Every (method, path) the Fastify router serves, read from `printRoutes()` (a tree whose lines carry the path
 * segment below their parent and the methods in parentheses), with `:param` written as the document's `{param}`.
 * HEAD is left out (Fastify adds it to every GET); docs routes are left out unless asked for.
 */
export function servedRoutes(app: NestFastifyApplication, { includeDocs = false } = {}): Set<string> {
  const fastify = app.getHttpAdapter().getInstance();
  const tree = fastify.printRoutes({ commonPrefix: false });
  const prefixes: string[] = [];
  const routes = new Set<string>();
  for (const line of tree.split('\n')) {
    const match = /^(.*?)(?:├── |└── )(.*?)(?: \(([^)]*)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1].length / 4;
    const path = (depth > 0 ? prefixes[depth - 1] : '') + match[2];
    prefixes[depth] = path;
    prefixes.length = depth + 1;
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim())) {
      if (!method || method === '-' || method === 'HEAD') continue;
      const template = path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      if (!includeDocs && isDocsRoute(template)) continue;
      // The parse must agree with the router itself.
      if (!fastify.hasRoute({ method, url: path })) {
        throw new Error(`printRoutes parsed to ${method} ${path}, which the router does not have`);
      }
      routes.add(routeKey(method, template));
    }
  }
  return routes;
}

/** `{ <name>: schema }` refs of an OpenAPI 3.0 document, resolved one level (enough for parameters and bodies). */
export function deref<T>(document: OpenAPIObject, value: T | ReferenceObject): T {
  if (value && typeof value === 'object' && '$ref' in value) {
    const name = value.$ref.replace('#/components/schemas/', '');
    const target = document.components?.schemas?.[name];
    if (!target) throw new Error(`Unresolved $ref ${value.$ref}`);
    return deref(document, target as T | ReferenceObject);
  }
  return value;
}

const DOCUMENT_ID = 'openapi';

/**
 * OpenAPI 3.0 schema → JSON Schema draft-07 for Ajv: `nullable: true` becomes "or null", `$ref`s point at
 * `components.schemas` of the document registered under {@link DOCUMENT_ID}, boolean exclusive bounds become
 * numeric, and annotation-only keywords are dropped.
 */
export function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const source = schema as Record<string, unknown>;
  if (typeof source.$ref === 'string') {
    return { $ref: source.$ref.replace('#/components/schemas/', `${DOCUMENT_ID}#/definitions/`) };
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    switch (key) {
      case 'nullable':
      case 'example':
      case 'examples':
      case 'xml':
      case 'externalDocs':
      case 'discriminator':
      case 'deprecated':
      case 'readOnly':
      case 'writeOnly':
        break;
      case 'properties':
      case 'patternProperties':
        out[key] = Object.fromEntries(
          Object.entries(value as Record<string, unknown>).map(([name, sub]) => [name, toJsonSchema(sub)]),
        );
        break;
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        if (value === true) {
          const bound = key === 'exclusiveMinimum' ? 'minimum' : 'maximum';
          out[key] = source[bound];
        } else if (value !== false) {
          out[key] = value;
        }
        break;
      case 'minimum':
      case 'maximum':
        if (source[key === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum'] !== true) out[key] = value;
        break;
      default:
        out[key] = toJsonSchema(value);
    }
  }
  if (source.nullable === true) return { anyOf: [{ type: 'null' }, out] };
  return out;
}

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const RFC3339_MILLIS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function createAjv(document: OpenAPIObject): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
  // A CommonJS module: its `module.exports` is the plugin, and so is its `default` (the one TypeScript sees).
  const addFormats = formatsModule.default;
  addFormats(ajv);
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= INT32.min && n <= INT32.max,
  });
  // A JSON number read as a double: 2^63 - 1 itself reads as 2^63, so that is the bound.
  ajv.addFormat('int64', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && Math.abs(n) <= 2 ** 63,
  });
  // docs/api.md §1: timestamps are RFC 3339 UTC with milliseconds.
  ajv.addFormat('date-time', (value: string) => RFC3339_MILLIS_UTC.test(value) && !isNaN(Date.parse(value)));
  ajv.addFormat('binary', () => true);
  ajv.addSchema(
    { $id: DOCUMENT_ID, definitions: toJsonSchema(document.components?.schemas ?? {}) },
    DOCUMENT_ID,
  );
  return ajv;
}

export interface ResponseCheck {
  operation?: DocOperation;
  /** Empty when the response is what the document declares. */
  errors: string[];
}

/** Matches concrete requests to the document's operations and validates response bodies against it. */
export class DocumentValidator {
  readonly operations: DocOperation[];
  private readonly ajv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly matchers: { operation: DocOperation; pattern: RegExp; params: number }[];

  constructor(readonly document: OpenAPIObject) {
    this.operations = operationsOf(document);
    this.ajv = createAjv(document);
    this.matchers = this.operations
      .map((operation) => ({
        operation,
        pattern: new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        params: (operation.path.match(/\{/g) ?? []).length,
      }))
      // A literal segment beats a parameter: /api/modules/me before /api/modules/{module_id}.
      .sort((a, b) => a.params - b.params);
  }

  /** The operation serving `method path` (path without its query string). */
  find(method: string, path: string): DocOperation | undefined {
    const bare = path.split('?')[0];
    return this.matchers.find((m) => m.operation.method === method.toUpperCase() && m.pattern.test(bare))
      ?.operation;
  }

  /** The JSON schema the document declares for a response, or undefined when the status is not declared. */
  responseSchema(operation: DocOperation, status: number): { declared: boolean; schema?: unknown } {
    const response = operation.operation.responses[String(status)];
    if (!response || '$ref' in response) return { declared: false };
    return { declared: true, schema: response.content?.['application/json']?.schema };
  }

  check(
    method: string,
    path: string,
    status: number,
    body: unknown,
    contentType: string | null,
  ): ResponseCheck {
    const operation = this.find(method, path);
    const where = `${method.toUpperCase()} ${path} → ${status}`;
    if (!operation) return { errors: [`${where}: no operation in the document`] };
    const { declared, schema } = this.responseSchema(operation, status);
    if (!declared) return { operation, errors: [`${where}: status ${status} is not declared`] };
    const content = (operation.operation.responses[String(status)] as ResponseObject).content ?? {};
    const isJson = contentType?.startsWith('application/json') ?? false;
    const empty = body === undefined || body === '';
    if (empty && Object.keys(content).length === 0) return { operation, errors: [] };
    if (!isJson) {
      const media = contentType?.split(';')[0].trim() ?? '';
      const declaredTypes = Object.keys(content);
      const ok = declaredTypes.some(
        (t) => t === media || t === '*/*' || (t.endsWith('/*') && media.startsWith(t.slice(0, -1))),
      );
      return {
        operation,
        errors: ok ? [] : [`${where}: content type ${media} not declared (${declaredTypes.join(', ')})`],
      };
    }
    if (!schema) return { operation, errors: [`${where}: no application/json schema declared`] };
    const key = `${operation.method} ${operation.path} ${status}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(schema) as object);
      this.compiled.set(key, validate);
    }
    if (validate(body)) return { operation, errors: [] };
    return {
      operation,
      errors: (validate.errors ?? []).map(
        (e) => `${where}: ${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
      ),
    };
  }

  /**
   * The messages the document lists for an error answer of `operation` with `status`: the `message` of each
   * example of its application/json content (errorResponse in src/openapi/openapi.ts), and the `enum` or
   * `example` of the schema's `message` property (of each member of an `anyOf`).
   */
  documentedMessages(operation: DocOperation, status: number): string[] {
    const response = operation.operation.responses[String(status)];
    if (!response || '$ref' in response) return [];
    const media = response.content?.['application/json'];
    const examples = Object.values(media?.examples ?? {}).map((example) =>
      '$ref' in example ? undefined : (example.value as { message?: unknown } | undefined),
    );
    examples.push(media?.example as { message?: unknown } | undefined);
    const messages = examples.flatMap((value) => (typeof value?.message === 'string' ? [value.message] : []));
    if (!media?.schema) return messages;
    // A schema that is one of several envelopes (an import's report, or the plain error) documents each one's.
    const root = deref(this.document, media.schema);
    for (const member of [root, ...(root.anyOf ?? []).map((one) => deref(this.document, one))]) {
      const property = member.properties?.message;
      if (!property) continue;
      const { enum: listed, example } = deref(this.document, property);
      for (const value of [...(listed ?? []), example]) {
        if (typeof value === 'string' && !messages.includes(value)) messages.push(value);
      }
    }
    return messages;
  }

  /**
   * The headers of docs/api.md §17 (`ETag`, `Cache-Control`, `Link`, `Idempotent-Replayed`) that an answer
   * carries and the document does not declare for its operation and status.
   */
  checkHeaders(method: string, path: string, status: number, headers: Headers): string[] {
    const operation = this.find(method, path);
    if (!operation) return [];
    const response = operation.operation.responses[String(status)];
    const declared = new Set(
      Object.keys(response && !('$ref' in response) ? (response.headers ?? {}) : {}).map((name) =>
        name.toLowerCase(),
      ),
    );
    return ['etag', 'cache-control', 'link', 'idempotent-replayed']
      .filter((name) => headers.has(name) && !declared.has(name))
      .filter((name) => name !== 'cache-control' || headers.has('etag'))
      .map((name) => `${method.toUpperCase()} ${path} → ${status}: header ${name} is not declared`);
  }

  /**
   * Whether an error answer's `message` is one the document lists for its operation and status. A `<name>` in a
   * documented message stands for any text (`Missing column: <name>`); a validation answer joins the messages of
   * several fields with `; `, each of which must be documented.
   */
  checkMessage(method: string, path: string, status: number, body: unknown): string[] {
    if (status < 400) return [];
    const operation = this.find(method, path);
    // An answer of no operation or without a message is reported by `check`.
    const message = (body as { message?: unknown } | undefined)?.message;
    if (!operation || typeof message !== 'string') return [];
    const where = `${method.toUpperCase()} ${path} → ${status}`;
    const documented = this.documentedMessages(operation, status);
    if (documented.length === 0)
      return [`${where}: "${message}", but no message is documented for ${status}`];
    const patterns = documented.map(
      (text) =>
        new RegExp(
          `^${text
            .split(/<[^<>]+>/)
            .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('.+')}$`,
        ),
    );
    const known = (text: string) => patterns.some((pattern) => pattern.test(text));
    if (known(message) || message.split('; ').every(known)) return [];
    return [`${where}: "${message}" is not among the documented messages ${JSON.stringify(documented)}`];
  }
}

export interface ConformingClient {
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** Sends a multipart body (an avatar upload). */
  multipart<T = any>(
    method: string,
    path: string,
    form: { body: Buffer; contentType: string },
    token?: string,
  ): Promise<ApiResponse<T>>;
  /** Every way a response so far differed from the document. */
  readonly problems: string[];
  /** How many responses were checked. */
  readonly checked: number;
  /** The operations (`GET /api/modules/{module_id}`) that answered at least once. */
  readonly exercised: Set<string>;
}

/**
 * A client whose every response is checked against the document (status declared, body valid) and, with
 * `messages`, every error answer's message against the messages documented for its operation and status.
 */
export function conformingClient(
  baseUrl: string,
  validator: DocumentValidator,
  { messages = false }: { messages?: boolean } = {},
): ConformingClient {
  const problems: string[] = [];
  const exercised = new Set<string>();
  let checked = 0;
  const record = <T>(method: string, path: string, response: ApiResponse<T>) => {
    checked++;
    const check = validator.check(
      method,
      path,
      response.status,
      response.body,
      response.headers.get('content-type'),
    );
    if (check.operation) exercised.add(routeKey(check.operation.method, check.operation.path));
    problems.push(...check.errors);
    if (messages) problems.push(...validator.checkMessage(method, path, response.status, response.body));
    problems.push(...validator.checkHeaders(method, path, response.status, response.headers));
    return response;
  };
  return {
    problems,
    exercised,
    get checked() {
      return checked;
    },
    request: async (method, path, options) =>
      record(method, path, await request(baseUrl, method, path, options)),
    multipart: async (method, path, form, token) => {
      const response = await fetch(baseUrl + path, {
        method,
        body: form.body,
        headers: { 'content-type': form.contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      });
      const text = await response.text();
      let body: unknown = text === '' ? undefined : text;
      if (response.headers.get('content-type')?.startsWith('application/json')) body = JSON.parse(text);
      return record(method, path, {
        status: response.status,
        headers: response.headers,
        body: body as never,
      });
    },
  };
}
