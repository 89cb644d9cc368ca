import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type INestApplication, type Type } from '@nestjs/common';
import { ModulesContainer, Reflector } from '@nestjs/core';
import {
  DocumentBuilder,
  type OpenAPIObject,
  type OperationObject,
  type ParameterObject,
  type SchemaObject,
  SwaggerModule,
} from '@nestjs/swagger';
import { type FastifyInstance, type FastifyReply } from 'fastify';
import { type AppConfig } from '../config/app-config.js';
import { handlerMetadata, type RouteMetadata } from '../core/route-metadata.js';
import {
  INVALID_IDEMPOTENCY_KEY_MESSAGE,
  KEY_IN_PROGRESS_MESSAGE,
  KEY_REUSED_MESSAGE,
} from '../idempotency/fingerprint.js';
import {
  errorEnvelope,
  INTERNAL_ERROR_MESSAGE,
  MALFORMED_JSON_MESSAGE,
  PERMISSION_DENIED_MESSAGE,
  REQUEST_BODY_TOO_LARGE_MESSAGE,
  UNSUPPORTED_CONTENT_TYPE_MESSAGE,
} from '../core/errors.js';
import { ErrorEnvelope, errorResponse, namedSchemas, UNAUTHENTICATED_MESSAGES } from './openapi.js';
import { ADMIN_CONSOLE_CSS, ADMIN_CONSOLE_SCRIPT } from './swagger-ui-console.js';

export const DOCS_PATH = '/api/docs';
export const DOCS_JSON_PATH = '/api/docs-json';
const SITE_TITLE = 'Module Administration Service API';

/** The security scheme of the identity provider's tokens (docs/sso.md), present when the console may sign in. */
const SSO_SCHEME = 'sso';

/** How the console signs people in: the settings of docs/sso.md it needs. */
export interface DocsSignIn {
  passwordLogin: boolean;
  /** Set when OIDC_ISSUER and OIDC_CLIENT_ID are: the console signs in through the IdP too. */
  sso?: { issuer: string; clientId: string; scopes: string[] };
}

export function docsSignIn(config: Pick<AppConfig, 'passwordLogin' | 'oidc'>): DocsSignIn {
  const { oidc } = config;
  return {
    passwordLogin: config.passwordLogin,
    sso:
      oidc?.clientId === undefined
        ? undefined
        : { issuer: oidc.issuer, clientId: oidc.clientId, scopes: oidc.scopes },
  };
}

const discoveryUrl = (issuer: string) => `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;

function signInText({ passwordLogin, sso }: DocsSignIn): string {
  const idp = sso && `Sign in with ${new URL(sso.issuer).host} (Authorize, then its \`${SSO_SCHEME}\` entry)`;
  const password =
    'Sign in by running `POST /api/auth/login` here (Execute): the page is then authorized with the returned ' +
    'token until it expires, also after a reload.';
  if (idp && passwordLogin) return `${idp}, or with a password: ${password}`;
  if (idp) return `${idp}.`;
  return password;
}

/**
 * Operations written by hand, added as they are: routes whose bodies are not the envelope (SCIM's), which the
 * decorators and {@link completeOperations} cannot describe.
 */
export interface DocumentAddition {
  paths: Record<string, unknown>;
  schemas: Record<string, unknown>;
}

/** Builds the OpenAPI 3 document from the decorators of every controller, and `addition` when given. */
export function buildOpenApiDocument(
  app: INestApplication,
  signIn: DocsSignIn = { passwordLogin: true },
  addition?: DocumentAddition,
): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Module Administration Service')
    .setDescription(
      'Manage course modules and the people in them. Every JSON response is an envelope ' +
        `\`{ success, data, message }\`. ${signInText(signIn)} ` +
        'The identity provider can provision people through SCIM 2.0 under `/api/scim/v2` (with ' +
        '`SCIM_ENABLED=true` and an integration token of scope `scim`): those routes answer SCIM bodies, not the ' +
        "envelope; setting them up in Entra ID or Okta is described in the repository's `docs/provisioning.md`. " +
        'A learning platform takes the rosters of an academic year as OneRoster 1.1 CSV (Brightspace) or Canvas ' +
        'SIS CSV from `/api/exports/…` (an admin, or an integration token of scope `exports`); loading them and ' +
        "scheduling it are described in the repository's `docs/lms-exports.md`.",
    )
    .setVersion('1.0.0')
    // Relative: the API is at the same origin as the document, wherever the service is deployed.
    .addServer('/', 'The host that serves this document')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
    .addTag('Auth', 'Sign in, the current user, password change')
    .addTag('Modules', 'Course modules')
    .addTag('Personnel', 'Lecturers, assistant lecturers and tutors of a module')
    .addTag('Students', 'The students of a module')
    .addTag('Users', 'User administration and avatars')
    .addTag('Health', 'Probes for Kubernetes')
    .addTag('Audit', 'Who changed what, and when')
    .addTag('Webhooks', 'Signed deliveries of change events to other systems')
    .addTag('Events', 'Every change to modules and users, in order, for other systems to follow')
    .addTag(
      'Integration tokens',
      'Long-lived tokens for SCIM provisioning, the change feed and the LMS exports',
    )
    .addTag(
      'LMS exports',
      "An academic year's rosters as OneRoster 1.1 or Canvas SIS CSV, for learning platforms",
    );
  if (signIn.sso) {
    builder.addSecurity(SSO_SCHEME, {
      type: 'openIdConnect',
      openIdConnectUrl: discoveryUrl(signIn.sso.issuer),
      description:
        `Sign in with ${new URL(signIn.sso.issuer).host} (authorization code + PKCE); the identity ` +
        "provider's access token is sent as a bearer token.",
    });
  }
  const config = builder.build();
  // Internal to the university (package.json: UNLICENSED); there is no licence text at a URL to point to.
  config.info.license = { name: 'Proprietary' };
  const document = SwaggerModule.createDocument(app, config, { operationIdFactory: operationId });
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...namedSchemas },
  };
  completeOperations(document, handlerAccess(app), signIn.sso !== undefined);
  if (addition) {
    document.tags = [
      ...(document.tags ?? []),
      { name: 'SCIM', description: 'SCIM 2.0 provisioning (docs/provisioning.md)' },
    ];
    Object.assign(document.paths, addition.paths);
    Object.assign((document.components ??= {}), {
      schemas: { ...document.components.schemas, ...addition.schemas },
    });
  }
  return document;
}

/**
 * `Auth.login`, `CourseModules.findOne`, …: without the `_` of the default `<Controller>_<method>`, which
 * Swagger UI's deep links (the page's URL after an operation is opened) read as an escaped space and warn
 * about in the console on every reload.
 */
function operationId(controllerKey: string, methodKey: string): string {
  return `${controllerKey.replace(/Controller$/, '')}.${methodKey}`;
}

/**
 * What the global guards, the interceptors and the envelope will do for each handler, keyed by its operationId,
 * read from the same metadata they read (core/route-metadata.ts).
 */
function handlerAccess(app: INestApplication): Map<string, RouteMetadata> {
  const reflector = new Reflector();
  const access = new Map<string, RouteMetadata>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type | null;
      if (!controller) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        access.set(operationId(controller.name, name), handlerMetadata(reflector, handler, controller));
      }
    }
  }
  return access;
}

/** Adds a failure response, or its messages to the one already declared for that status. */
function addFailure(operation: OperationObject, status: number, messages: string[]): void {
  const existing = operation.responses[String(status)];
  if (!existing || '$ref' in existing) {
    operation.responses[String(status)] = errorResponse(messages);
    return;
  }
  const media = (existing.content ??= {})['application/json'] ?? {};
  existing.content['application/json'] = media;
  const examples = (media.examples ??= {}) as Record<string, { summary?: string; value?: unknown }>;
  const known = new Set(Object.values(examples).map((e) => e.summary));
  // A status whose answer carries data (an import's report) also answers the plain error envelope.
  const own = media.schema;
  const plain =
    own === undefined || ('$ref' in own ? own.$ref === ErrorEnvelope.$ref : own.anyOf !== undefined);
  if (own && !plain && messages.some((message) => !known.has(message))) {
    media.schema = { anyOf: [own, ErrorEnvelope] };
  }
  let index = Object.keys(examples).length;
  for (const message of messages) {
    if (known.has(message)) continue;
    examples[`e${++index}`] = { summary: message, value: errorEnvelope(message) };
    existing.description = existing.description ? `${existing.description} | ${message}` : message;
  }
}

/**
 * A multipart body declared as one binary file (a CSV import's "the file as the body or as the part `file`")
 * becomes the form it is: an object whose part `file` is binary, which Swagger UI shows as a file chooser.
 */
function fileParts(content: Record<string, unknown>): void {
  const media = content['multipart/form-data'] as { schema?: SchemaObject } | undefined;
  const schema = media?.schema;
  if (!schema || schema.type !== 'string' || schema.format !== 'binary') return;
  media.schema = {
    type: 'object',
    required: ['file'],
    properties: { file: { type: 'string', format: 'binary', description: 'The file, one part only.' } },
  };
}

const HEADERS = {
  etag: { description: "A strong validator: a hash of the answer's data.", schema: { type: 'string' } },
  cacheControl: {
    description: '`private, no-cache`: revalidate with If-None-Match.',
    schema: { type: 'string' },
  },
  link: {
    description:
      'RFC 8288 links to the `first`, `prev`, `next` and `last` pages: absolute URLs with every query ' +
      'parameter kept; `prev` and `next` only where they exist.',
    schema: { type: 'string' },
  },
  replayed: {
    description:
      '`true` when the answer is the one remembered for this Idempotency-Key (nothing was done again).',
    schema: { type: 'string', enum: ['true'] },
  },
} as const;

/** Adds `headers` to the operation's 2xx answers. */
function addSuccessHeaders(operation: OperationObject, headers: Record<string, object>): void {
  for (const [status, response] of Object.entries(operation.responses)) {
    if (!/^2\d\d$/.test(status) || !response || '$ref' in response) continue;
    response.headers = { ...response.headers, ...headers };
  }
}

/**
 * docs/api.md §17, from the metadata the envelope and the idempotency interceptor read: a single read's (or a
 * write answering it) `ETag` and `Cache-Control`, a paged list's `Link`, and on every POST but the public ones and
 * SCIM's the `Idempotency-Key` header with its `Idempotent-Replayed` answers and its 400, 409 and 422.
 */
function declareHttpConventions(method: string, operation: OperationObject, handler: RouteMetadata): void {
  // A single read, and a write that answers the resource's new ETag (the writes that take If-Match).
  const takesIfMatch = (operation.parameters ?? []).some(
    (parameter) => !('$ref' in parameter) && parameter.in === 'header' && parameter.name === 'If-Match',
  );
  if (handler.singleRead || (takesIfMatch && method !== 'delete')) {
    addSuccessHeaders(operation, { ETag: HEADERS.etag, 'Cache-Control': HEADERS.cacheControl });
  }
  if (handler.paged) addSuccessHeaders(operation, { Link: HEADERS.link });
  if (method !== 'post' || handler.isPublic || handler.bare) return;
  (operation.parameters ??= []).push({
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes a retry safe: the first 2xx answer for this key is remembered 24 hours for you and answered again ' +
      '(with Idempotent-Replayed: true) to a repeat of the same request, which then changes nothing.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
  });
  addSuccessHeaders(operation, { 'Idempotent-Replayed': HEADERS.replayed });
  addFailure(operation, 400, [INVALID_IDEMPOTENCY_KEY_MESSAGE]);
  addFailure(operation, 409, [KEY_IN_PROGRESS_MESSAGE]);
  addFailure(operation, 422, [KEY_REUSED_MESSAGE]);
}

/**
 * The responses every route gets from the shared machinery rather than from its own code, added from what the
 * guards, pipes and framework really do so that no controller can forget them: bearer security with 401 (and the
 * admin 403) from the guard metadata, 400 for a path id, 400/413/415 for any body of a write method (Fastify
 * parses one even where the route takes none), and the route's 500.
 */
function completeOperations(document: OpenAPIObject, access: Map<string, RouteMetadata>, sso: boolean): void {
  for (const item of Object.values(document.paths)) {
    for (const [method, operation] of [
      ['get', item.get],
      ['put', item.put],
      ['post', item.post],
      ['delete', item.delete],
      ['patch', item.patch],
    ] as const) {
      if (!operation) continue;
      const handler = operation.operationId ? access.get(operation.operationId) : undefined;
      // An empty list says "no credentials", where a missing one would mean "whatever the document's default is".
      if (handler?.isPublic) operation.security = [];
      if (handler && !handler.isPublic) {
        operation.security ??= [];
        if (!operation.security.some((requirement) => 'bearer' in requirement)) {
          operation.security.push({ bearer: [] });
        }
        // Either scheme: a bearer token of the service, or the IdP's access token got through the console.
        if (sso && !operation.security.some((requirement) => SSO_SCHEME in requirement)) {
          operation.security.push({ [SSO_SCHEME]: [] });
        }
        addFailure(operation, 401, UNAUTHENTICATED_MESSAGES);
        if (handler.adminOnly) addFailure(operation, 403, [PERMISSION_DENIED_MESSAGE]);
      }
      for (const parameter of (operation.parameters ?? []) as ParameterObject[]) {
        if (parameter.in !== 'path' || !parameter.name.endsWith('_id')) continue;
        parameter.required = true;
        // On a fresh installation user 1 is the admin, and user 2 the user the POST /api/users example creates.
        const example = parameter.name === 'user_id' ? 2 : 1;
        parameter.schema = { type: 'integer', format: 'int64', minimum: 1, example };
        parameter.description ??= 'A positive integer id (64-bit).';
        addFailure(operation, 400, [`${parameter.name} must be a positive integer`]);
      }
      // Fastify reads the body of every write method, declared or not; multipart routes declare their own.
      const content = (operation.requestBody as { content?: Record<string, unknown> } | undefined)?.content;
      if (method !== 'get' && (!content || content['application/json'])) {
        addFailure(operation, 400, [MALFORMED_JSON_MESSAGE]);
        addFailure(operation, 413, [REQUEST_BODY_TOO_LARGE_MESSAGE]);
        addFailure(operation, 415, [UNSUPPORTED_CONTENT_TYPE_MESSAGE]);
      }
      if (content) fileParts(content);
      if (handler) declareHttpConventions(method, operation, handler);
      addFailure(operation, 500, [handler?.failure ?? INTERNAL_ERROR_MESSAGE]);
    }
  }
}

const UI_SCRIPT = 'application/javascript; charset=utf-8';

/** The Swagger UI files served under /api/docs/, from the swagger-ui-dist that @nestjs/swagger ships with. */
const UI_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': UI_SCRIPT,
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
  // Where the identity provider sends the console's sign-in popup back (authorization code + PKCE).
  'oauth2-redirect.html': 'text/html; charset=utf-8',
  'oauth2-redirect.js': UI_SCRIPT,
};

/** The page the IdP redirects the console's sign-in popup to; it hands the code to the console (opener). */
export const OAUTH2_REDIRECT_PATH = `${DOCS_PATH}/oauth2-redirect.html`;

function swaggerUiDistDir(): string {
  const requireFromSwagger = createRequire(createRequire(import.meta.url).resolve('@nestjs/swagger'));
  return path.dirname(requireFromSwagger.resolve('swagger-ui-dist/package.json'));
}

/** The UI page; `base` is where its files are relative to the page's URL (with or without a trailing slash). */
function uiHtml(base: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>${SITE_TITLE}</title>
  <link rel="stylesheet" type="text/css" href="${base}swagger-ui.css">
  <link rel="stylesheet" type="text/css" href="${base}admin-console.css">
  <link rel="icon" type="image/png" href="${base}favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="${base}favicon-16x16.png" sizes="16x16">
</head>
<body>
  <div id="session-status" class="session-status" role="status" aria-live="polite"></div>
  <div id="swagger-ui"></div>
  <script src="${base}swagger-ui-bundle.js"></script>
  <script src="${base}admin-console.js"></script>
  <script src="${base}swagger-ui-init.js"></script>
</body>
</html>
`;
}

/**
 * Starts the UI on the inlined document; no inline script, so the docs CSP needs no 'unsafe-inline' scripts.
 * Ready to use: "Try it out" is on, the filter box is shown, durations are shown, and the admin console
 * (swagger-ui-console.ts) authorizes the page from a sign-in run on it.
 */
function uiInitScript(document: OpenAPIObject, signIn: DocsSignIn): string {
  const options = {
    spec: document,
    dom_id: '#swagger-ui',
    deepLinking: true,
    layout: 'BaseLayout',
    persistAuthorization: true,
    displayRequestDuration: true,
    tryItOutEnabled: true,
    filter: true,
    // The public validator badge would call out to validator.swagger.io.
    validatorUrl: null,
  };
  return `window.onload = function () {
  var options = ${JSON.stringify(options)};
  options.presets = [SwaggerUIBundle.presets.apis];
  options.plugins = [window.AdminConsole.plugin];
  options.responseInterceptor = window.AdminConsole.responseInterceptor;
  // Beside this page, whether its URL ends in a slash or not.
  options.oauth2RedirectUrl = location.origin + location.pathname.replace(/\\/?$/, '/') + 'oauth2-redirect.html';
  window.ui = SwaggerUIBundle(options);${
    signIn.sso
      ? `
  window.ui.initOAuth(${JSON.stringify({
    clientId: signIn.sso.clientId,
    scopes: signIn.sso.scopes,
    usePkceWithAuthorizationCodeGrant: true,
  })});`
      : ''
  }
};
`;
}

/**
 * Swagger UI at /api/docs and the JSON document at /api/docs-json, both public (plain Fastify routes, outside
 * the Nest guards). The UI's files are served here rather than by SwaggerModule, whose @fastify/static needs an
 * ES-module-only dependency that Jest's module loader cannot require.
 */
export function setupOpenApi(
  app: INestApplication,
  signIn: DocsSignIn = { passwordLogin: true },
  addition?: DocumentAddition,
): void {
  let document: OpenAPIObject | undefined;
  const getDocument = () => (document ??= buildOpenApiDocument(app, signIn, addition));
  SwaggerModule.setup(DOCS_PATH, app, getDocument, {
    useGlobalPrefix: false,
    ui: false,
    raw: ['json'],
    jsonDocumentUrl: DOCS_JSON_PATH,
  });

  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  const distDir = swaggerUiDistDir();
  const files = new Map<string, Promise<Buffer>>();
  let initScript: string | undefined;
  const html = (base: string) => (_request: unknown, reply: FastifyReply) =>
    reply.type('text/html; charset=utf-8').send(uiHtml(base));

  fastify.get(DOCS_PATH, html(`${path.posix.basename(DOCS_PATH)}/`));
  fastify.get(`${DOCS_PATH}/`, html('./'));
  fastify.get(`${DOCS_PATH}/swagger-ui-init.js`, (_request, reply) =>
    reply
      .type(UI_SCRIPT)
      .header('cache-control', 'no-cache')
      .send((initScript ??= uiInitScript(getDocument(), signIn))),
  );
  const consoleFile = (type: string, content: string) => (_request: unknown, reply: FastifyReply) =>
    reply.type(type).header('cache-control', 'no-cache').send(content);
  fastify.get(`${DOCS_PATH}/admin-console.js`, consoleFile(UI_SCRIPT, ADMIN_CONSOLE_SCRIPT));
  fastify.get(`${DOCS_PATH}/admin-console.css`, consoleFile('text/css; charset=utf-8', ADMIN_CONSOLE_CSS));
  for (const [name, type] of Object.entries(UI_ASSETS)) {
    fastify.get(`${DOCS_PATH}/${name}`, async (_request, reply) => {
      if (!files.has(name)) files.set(name, readFile(path.join(distDir, name)));
      const content = await files.get(name)!;
      return reply.type(type).header('cache-control', 'public, max-age=3600').send(content);
    });
  }
}
