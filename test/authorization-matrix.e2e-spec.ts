import { type OpenAPIObject, type RequestBodyObject } from '@nestjs/swagger';
import { DOCS_JSON_PATH, DOCS_PATH } from '../src/openapi/setup.js';
import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import { type TestApp, useTestApp } from './support/app.js';
import { CONSOLE_CLIENT_ID, TEST_AUDIENCE, TestIdp } from './support/idp.js';
import {
  assignRole,
  DEFAULT_PASSWORD,
  makeModule,
  makeUser,
  type ModuleRow,
  tokenFor,
  unsignedToken,
  type UserRow,
} from './support/factories.js';
import {
  addAssignmentWithFile,
  failure,
  PERMISSION_DENIED,
  rowsOfModule,
  storedFiles,
} from './support/modules-fixtures.js';
import { makeWebhook } from './support/webhook-fixtures.js';
import { makeIntegrationToken } from './support/token-fixtures.js';
import { deref, type DocOperation, fetchDocument, operationsOf, routeKey } from './support/openapi.js';
import { multipartBody } from './support/openapi-requests.js';
import { type Access, ROUTE_ACCESS } from './support/route-access.js';

/**
 * Every operation of the served OpenAPI document × every kind of caller: bad credentials (docs/api.md §2),
 * callers with each module role, admins, and non-members acting on a module they do not belong to.
 */

/**
 * A caller with a valid token. `demoted` is an admin demoted after their token was issued; `sso_*` callers send
 * an access token of the identity provider (docs/sso.md) for a local admin and a local Lecturer.
 */
type Persona =
  | 'nobody'
  | 'student'
  | 'tutor'
  | 'assistant'
  | 'lecturer'
  | 'admin'
  | 'demoted'
  | 'sso_admin'
  | 'sso_lecturer'
  | 'lecturer_completed'
  | 'lecturer_upcoming'
  | 'lecturer_inactive';

const PERSONAS: readonly Persona[] = [
  'nobody',
  'student',
  'tutor',
  'assistant',
  'lecturer',
  'admin',
  'demoted',
  'sso_admin',
  'sso_lecturer',
  'lecturer_completed',
  'lecturer_upcoming',
  'lecturer_inactive',
];

/** The role each persona holds in the module a request addresses. */
const ROLE_OF: Record<Persona, ModuleRole | null> = {
  nobody: null,
  student: ModuleRole.Student,
  tutor: ModuleRole.Tutor,
  assistant: ModuleRole.AssistantLecturer,
  lecturer: ModuleRole.Lecturer,
  admin: null,
  demoted: null,
  sso_admin: null,
  sso_lecturer: ModuleRole.Lecturer,
  lecturer_completed: ModuleRole.Lecturer,
  lecturer_upcoming: ModuleRole.Lecturer,
  lecturer_inactive: ModuleRole.Lecturer,
};

/**
 * The membership lifecycle (docs/api.md §15) of the personas whose Lecturer role is not effective `active`: one
 * whose `ends_at` has passed (effective `completed`: read access only), one whose `starts_at` is still to come
 * (`upcoming`) and one `inactive` (both: as non-members).
 */
const LIFECYCLE_OF: Partial<Record<Persona, string>> = {
  lecturer_completed: `starts_at = now() - interval '30 days', ends_at = now() - interval '1 day'`,
  lecturer_upcoming: `starts_at = now() + interval '1 day'`,
  lecturer_inactive: `status = 'inactive'`,
};

/** Gives the role row of `userId` in `moduleId` the lifecycle of `persona`, if it has one. */
async function applyLifecycle(app: TestApp, persona: Persona, userId: number, moduleId: number) {
  const set = LIFECYCLE_OF[persona];
  if (set === undefined) return;
  await app.dataSource.query(`UPDATE user_module_roles SET ${set} WHERE user_id = $1 AND module_id = $2`, [
    userId,
    moduleId,
  ]);
}

// The personas each access class of the route-access table lets through (docs/api.md §2, §15).
const SIGNED_IN = PERSONAS;
const SSO: readonly Persona[] = ['sso_admin', 'sso_lecturer'];
// A completed membership keeps read access (docs/api.md §15): the single read, and the module list (every caller).
const MEMBERS: readonly Persona[] = [
  'student',
  'tutor',
  'assistant',
  'lecturer',
  'admin',
  ...SSO,
  'lecturer_completed',
];
const TEACHING: readonly Persona[] = ['tutor', 'assistant', 'lecturer', 'admin', ...SSO];
const STAFF: readonly Persona[] = ['assistant', 'lecturer', 'admin', ...SSO];
const MANAGERS: readonly Persona[] = ['lecturer', 'admin', ...SSO];
const ADMIN: readonly Persona[] = ['admin', 'sso_admin'];

const ALLOWED: Record<Access, 'public' | readonly Persona[]> = {
  public: 'public',
  'signed-in': SIGNED_IN,
  members: MEMBERS,
  teaching: TEACHING,
  staff: STAFF,
  managers: MANAGERS,
  admin: ADMIN,
};

/** What a request is built from: a fresh module and a fresh target user for every request. */
interface Fixture {
  module: ModuleRow;
  /** The user a request names (path `user_id`, `user_ids`, a roster line). */
  target: UserRow;
  /** Unique within the run, for usernames and module codes that must not clash. */
  unique: number;
  /** A user who signs in, and one with an avatar: the same for every request. */
  login: UserRow;
  withAvatar: UserRow;
  /** A webhook a request may address (and delete). */
  webhook: { id: number };
  /** An integration token a request may address (and revoke). */
  token: { id: number };
}

interface Built {
  /** Query string without `?`. */
  query?: string;
  json?: unknown;
  csv?: string;
  multipart?: boolean;
}

/** How a request to one route is made: what `concrete` needs beyond the path's module and target. */
interface Request {
  /** The role the target holds in the module before the request, so that a removal has something to remove. */
  targetRole?: ModuleRole;
  /** Path ids other than the fixture's module and target. */
  params?: (f: Fixture) => Record<string, number>;
  /**
   * A request that passes validation: a module role is checked after the body (docs/api.md §1, check order),
   * so only a valid request tells access apart from a bad body.
   */
  build?: (f: Fixture) => Built;
  /** Changes the caller's own credentials: run after every other operation. */
  last?: boolean;
  /** Personas of the access class the route refuses by a rule of its own: the 403 message each gets. */
  refuses?: Partial<Record<Persona, string>>;
}

interface Row extends Request {
  /** `public`: no token needed (docs/api.md §2). Otherwise the personas let through; all others get 403. */
  allowed: 'public' | readonly Persona[];
}

const username = (f: Fixture) => `authz-${process.pid}-${f.unique}`;

/** An access token of the test IdP for an identity nobody is bound to: the body of POST /api/auth/sso-binding. */
let linkToken = '';

/** How to build a request that passes validation, for the routes that need more than their path. */
const REQUESTS: Record<string, Request> = {
  'POST /api/auth/login': {
    build: ({ login }) => ({ json: { username: login.username, password: DEFAULT_PASSWORD } }),
  },
  'PUT /api/auth/password': {
    build: () => ({ json: { current_password: DEFAULT_PASSWORD, new_password: DEFAULT_PASSWORD } }),
    last: true,
  },
  'POST /api/modules': {
    build: (f) => ({
      json: {
        code: `AZ${String.fromCharCode(65 + (Math.floor(f.unique / 1000) % 26))}${String(f.unique % 1000).padStart(3, '0')}`,
        year: 2031,
        credits: 10,
      },
    }),
  },
  'PUT /api/modules/{module_id}': {
    build: ({ module }) => ({
      json: {
        code: module.code,
        year: module.year,
        description: module.description,
        credits: module.credits,
      },
    }),
  },
  'DELETE /api/modules/bulk': {
    build: ({ module }) => ({ json: { module_ids: [module.id] } }),
  },
  'POST /api/modules/rollover': {
    build: ({ module }) => ({ json: { from_year: module.year, to_year: 2032, codes: [module.code] } }),
  },
  'POST /api/modules/{module_id}/personnel': {
    build: ({ target }) => ({ json: { user_ids: [target.id], role: 'Tutor' } }),
  },
  'DELETE /api/modules/{module_id}/personnel': {
    targetRole: ModuleRole.Tutor,
    build: ({ target }) => ({ json: { user_ids: [target.id], role: 'Tutor' } }),
  },
  'PATCH /api/modules/{module_id}/members': {
    targetRole: ModuleRole.Tutor,
    build: ({ target }) => ({ json: { user_ids: [target.id], status: 'completed' } }),
  },
  'POST /api/modules/{module_id}/students': {
    build: ({ target }) => ({ json: { user_ids: [target.id] } }),
  },
  'DELETE /api/modules/{module_id}/students': {
    targetRole: ModuleRole.Student,
    build: ({ target }) => ({ json: { user_ids: [target.id] } }),
  },
  'POST /api/modules/{module_id}/roster/import': {
    build: ({ target }) => ({ csv: `user,role\n${target.username},Student\n` }),
  },
  'POST /api/users': {
    build: (f) => ({
      json: { username: username(f), email: `${username(f)}@example.edu`, password: DEFAULT_PASSWORD },
    }),
  },
  'POST /api/users/bulk': {
    build: (f) => ({
      json: {
        users: [{ username: username(f), email: `${username(f)}@example.edu`, password: DEFAULT_PASSWORD }],
      },
    }),
  },
  'POST /api/users/import': {
    build: (f) => ({ csv: `username,email\n${username(f)},${username(f)}@example.edu\n` }),
  },
  'PUT /api/users/{user_id}': {
    build: (f) => ({ json: { email: `${username(f)}@example.edu` } }),
  },
  'PUT /api/users/{user_id}/sso-binding': {
    build: (f) => ({ json: { issuer: 'https://login.example.edu', subject: username(f) } }),
  },
  'POST /api/auth/sso-binding': {
    build: () => ({ json: { token: linkToken } }),
    // Linking needs a password sign-in (docs/sso.md): an admin signed in through the IdP is refused.
    refuses: { sso_admin: 'Sign in with your password to link an identity' },
  },
  'PUT /api/users/{user_id}/avatar': { build: () => ({ multipart: true }) },
  'GET /api/users/{user_id}/avatar': {
    params: ({ withAvatar }) => ({ user_id: withAvatar.id }),
  },
  'POST /api/webhooks': {
    build: () => ({ json: { url: 'https://203.0.113.10/hooks', types: ['user.deleted'] } }),
  },
  'PUT /api/webhooks/{webhook_id}': { build: () => ({ json: { description: 'authz' } }) },
  'POST /api/tokens': { build: () => ({ json: { name: 'authz', scopes: ['events'] } }) },
  'GET /api/exports/oneroster-1.1.zip': { build: ({ module }) => ({ query: `year=${module.year}` }) },
  'GET /api/exports/canvas-sis.zip': { build: ({ module }) => ({ query: `year=${module.year}` }) },
};

interface Answer {
  status: number;
  /** Parsed JSON, or the text of anything else (a CSV, an image as text). */
  body: any;
  contentType: string;
}

/** One operation made concrete: its path with ids filled in and a request that passes validation. */
function concrete(operation: DocOperation, row: Row, f: Fixture): { path: string; built: Built } {
  const ids: Record<string, number> = {
    module_id: f.module.id,
    user_id: f.target.id,
    webhook_id: f.webhook.id,
    token_id: f.token.id,
    ...row.params?.(f),
  };
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (ids[name] === undefined)
      throw new Error(`no fixture for path parameter ${name} of ${operation.path}`);
    return String(ids[name]);
  });
  return { path, built: row.build?.(f) ?? {} };
}

let sequence = 0;

describe('authorization matrix (docs/api.md §2, §4, §5, §9, §10, §11)', () => {
  // The identity provider starts first; its issuer goes into the settings the service starts with below.
  let idp: TestIdp;
  const settings: Pick<TestApp['config'], 'oidc'> = { oidc: undefined };
  beforeAll(async () => {
    idp = await TestIdp.start();
    settings.oidc = {
      issuer: idp.issuer,
      audience: TEST_AUDIENCE,
      usernameClaim: 'preferred_username',
      createUsers: false,
      clientId: CONSOLE_CLIENT_ID,
      scopes: ['openid'],
      maxTokenAgeS: 86_400,
      refetchCooldownMs: 30_000,
    };
  });
  afterAll(() => idp?.stop());
  const { app } = useTestApp(settings);
  let ssoTokens: Record<'sso_admin' | 'sso_lecturer', string>;
  let document: OpenAPIObject;
  let operations: DocOperation[];
  let users: Record<Exclude<Persona, 'demoted'>, UserRow>;
  let demotedToken: string;
  let login: UserRow;
  let withAvatar: UserRow;
  /** A header value (or none) and the 401 message docs/api.md §2 gives it. */
  let badCredentials: { name: string; authorization?: string; message: string }[];
  let sent = 0;

  async function send(method: string, path: string, built: Built, authorization?: string): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (authorization !== undefined) headers.authorization = authorization;
    let body: string | Buffer | undefined;
    if (built.multipart) {
      const form = multipartBody();
      headers['content-type'] = form.contentType;
      body = form.body;
    } else if (built.csv !== undefined) {
      headers['content-type'] = 'text/csv';
      body = built.csv;
    } else if (built.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(built.json);
    }
    const url = `${app.url}${path}${built.query ? `?${built.query}` : ''}`;
    sent++;
    const response = await fetch(url, { method, headers, body });
    const contentType = response.headers.get('content-type') ?? '';
    const text = await response.text();
    return {
      status: response.status,
      body: contentType.startsWith('application/json') && text !== '' ? JSON.parse(text) : text,
      contentType,
    };
  }

  const bearer = (token: string) => `Bearer ${token}`;
  const tokenOf = (persona: Persona) =>
    persona === 'demoted'
      ? demotedToken
      : persona === 'sso_admin' || persona === 'sso_lecturer'
        ? ssoTokens[persona]
        : tokenFor(users[persona]);

  /** A fresh module (with the caller's role in it) and target user for one request. */
  async function fixtureFor(
    row: Row,
    caller?: UserRow,
    callerRole?: ModuleRole | null,
    persona?: Persona,
  ): Promise<Fixture> {
    const module = await makeModule(app.dataSource);
    const target = await makeUser(app.dataSource);
    if (caller && callerRole) {
      await assignRole(app.dataSource, caller.id, module.id, callerRole);
      if (persona) await applyLifecycle(app, persona, caller.id, module.id);
    }
    if (row.targetRole) await assignRole(app.dataSource, target.id, module.id, row.targetRole);
    const webhook = await makeWebhook(app.dataSource);
    const token = await makeIntegrationToken(app.dataSource);
    return { module, target, unique: ++sequence, login, withAvatar, webhook, token };
  }

  const successStatuses = (operation: DocOperation) =>
    Object.keys(operation.operation.responses)
      .filter((status) => /^2\d\d$/.test(status))
      .map(Number);

  /** Every operation with its row, those that change the caller's own credentials last. */
  const rowsInOrder = () =>
    operations
      .map((operation) => {
        const key = routeKey(operation.method, operation.path);
        // A route missing from the table fails openapi-document.e2e-spec.ts; here it must not pass unchecked.
        if (!(key in ROUTE_ACCESS)) throw new Error(`${key} has no row in test/support/route-access.ts`);
        const row: Row = { ...REQUESTS[key], allowed: ALLOWED[ROUTE_ACCESS[key]] };
        return { operation, key, row };
      })
      .sort((a, b) => Number(a.row.last ?? false) - Number(b.row.last ?? false));

  const describeAnswer = (answer: Answer) =>
    typeof answer.body === 'string'
      ? `${answer.status} ${answer.contentType}${answer.contentType.startsWith('text/') ? ` ${answer.body.slice(0, 60)}` : ''}`
      : `${answer.status} ${JSON.stringify(answer.body)}`;

  beforeAll(async () => {
    const started = Date.now();
    document = await fetchDocument(app.url);
    operations = operationsOf(document);
    await app.reset();
    const ds = app.dataSource;
    users = {
      nobody: await makeUser(ds),
      student: await makeUser(ds),
      tutor: await makeUser(ds),
      assistant: await makeUser(ds),
      lecturer: await makeUser(ds),
      admin: await makeUser(ds, { admin: true }),
      sso_admin: await makeUser(ds, { admin: true }),
      sso_lecturer: await makeUser(ds),
      lecturer_completed: await makeUser(ds),
      lecturer_upcoming: await makeUser(ds),
      lecturer_inactive: await makeUser(ds),
    };
    // An admin is reached only through their binding (docs/sso.md): the test IdP's subject of that username.
    await ds.query(`UPDATE users SET sso_issuer = $2, sso_subject = $3 WHERE id = $1`, [
      users.sso_admin.id,
      idp.issuer,
      `person-${users.sso_admin.username.toLowerCase()}`,
    ]);
    linkToken = await idp.accessToken({ preferred_username: 'authz-link', sub: 'authz-link-subject' });
    // Tokens the provider issues, naming the local users by username (in another letter case).
    ssoTokens = {
      sso_admin: await idp.accessToken({ preferred_username: users.sso_admin.username.toUpperCase() }),
      sso_lecturer: await idp.accessToken({ preferred_username: users.sso_lecturer.username }),
    };
    const adminAuth = bearer(tokenFor(users.admin));
    const asAdmin = (method: string, path: string, built: Built = {}) => send(method, path, built, adminAuth);
    login = await makeUser(ds);
    withAvatar = await makeUser(ds);
    expect((await asAdmin('PUT', `/api/users/${withAvatar.id}/avatar`, { multipart: true })).status).toBe(
      200,
    );

    // An admin signed in through the service, seen as admin once (so a cache holds it), then demoted.
    const demoted = await makeUser(ds, { admin: true });
    const signIn = await send('POST', '/api/auth/login', {
      json: { username: demoted.username, password: DEFAULT_PASSWORD },
    });
    expect(signIn.status).toBe(200);
    demotedToken = signIn.body.data.token;
    expect((await send('GET', '/api/users', {}, bearer(demotedToken))).status).toBe(200);
    expect((await asAdmin('PUT', `/api/users/${demoted.id}`, { json: { admin: false } })).status).toBe(200);

    // An admin's token used once, then the admin deleted; another's, then their password changed by an admin.
    const deleted = await makeUser(ds, { admin: true });
    const deletedToken = tokenFor(deleted);
    expect((await send('GET', '/api/users', {}, bearer(deletedToken))).status).toBe(200);
    expect((await asAdmin('DELETE', `/api/users/${deleted.id}`)).status).toBe(200);
    const changed = await makeUser(ds, { admin: true });
    // An account set up an hour ago, so that a token from a few seconds ago predates only the change below.
    await ds.query(`UPDATE users SET password_changed_at = now() - interval '1 hour' WHERE id = $1`, [
      changed.id,
    ]);
    const beforeChange = tokenFor(changed, { iat: Math.floor(Date.now() / 1000) - 5 });
    expect((await send('GET', '/api/users', {}, bearer(beforeChange))).status).toBe(200);
    expect(
      (await asAdmin('PUT', `/api/users/${changed.id}`, { json: { password: 'a-new-password-0123' } }))
        .status,
    ).toBe(200);

    // Forgeries of an admin's token, and tampered copies of a real non-admin token.
    const now = Math.floor(Date.now() / 1000);
    const secret = app.config.jwtSecret!;
    const real = tokenFor(users.nobody, { secret }).split('.');
    const withClaims = (change: Record<string, unknown>) => {
      const claims = { ...JSON.parse(Buffer.from(real[1], 'base64url').toString()), ...change };
      return [real[0], Buffer.from(JSON.stringify(claims)).toString('base64url'), real[2]].join('.');
    };
    const AUTH_REQUIRED = 'Authentication required';
    const INVALID = 'Invalid or expired token';
    badCredentials = [
      { name: 'no Authorization header', message: AUTH_REQUIRED },
      { name: '"Bearer" without a token', authorization: 'Bearer', message: AUTH_REQUIRED },
      { name: 'Basic scheme', authorization: 'Basic YWRtaW46YWRtaW4=', message: AUTH_REQUIRED },
      { name: 'garbage header', authorization: 'garbage', message: AUTH_REQUIRED },
      {
        name: "an admin's valid token under another scheme",
        authorization: `Token ${tokenFor(users.admin)}`,
        message: AUTH_REQUIRED,
      },
      {
        name: "an admin's valid token followed by more text",
        authorization: `Bearer ${tokenFor(users.admin)} extra`,
        message: AUTH_REQUIRED,
      },
      { name: 'Bearer a.b', authorization: 'Bearer a.b', message: INVALID },
      { name: 'Bearer garbage', authorization: 'Bearer %%%not-a-token%%%', message: INVALID },
      {
        name: 'alg none',
        authorization: bearer(
          unsignedToken({ sub: Number(users.admin.id), admin: true, iat: now, exp: now + 3600 }),
        ),
        message: INVALID,
      },
      {
        name: 'HS256 signed with another key',
        authorization: bearer(
          tokenFor(users.admin, { secret: 'another-secret-that-is-long-enough-0123456789' }),
        ),
        message: INVALID,
      },
      {
        name: 'HS512 signed with the real key',
        authorization: bearer(tokenFor(users.admin, { secret, algorithm: 'HS512' })),
        message: INVALID,
      },
      {
        name: 'expired (real key)',
        authorization: bearer(tokenFor(users.admin, { secret, iat: now - 7200, expiresIn: 3600 })),
        message: INVALID,
      },
      {
        name: 'tampered payload: admin true',
        authorization: bearer(withClaims({ admin: true })),
        message: INVALID,
      },
      {
        name: "tampered payload: an admin's sub",
        authorization: bearer(withClaims({ sub: Number(users.admin.id) })),
        message: INVALID,
      },
      { name: 'token of a deleted admin', authorization: bearer(deletedToken), message: INVALID },
      {
        name: 'token issued before a password change',
        authorization: bearer(beforeChange),
        message: INVALID,
      },
    ];
    console.log(`authorization matrix: fixtures ready in ${Date.now() - started} ms`);
  });

  afterAll(() => {
    if (!operations || !badCredentials) return;
    console.log(
      `authorization matrix: ${operations.length} operations, ${badCredentials.length} bad credentials, ` +
        `${PERSONAS.length} valid personas; ${sent} requests sent`,
    );
  });

  it('builds requests only for routes of the route-access table', () => {
    expect(Object.keys(REQUESTS).filter((key) => !(key in ROUTE_ACCESS))).toEqual([]);
  });

  it('refuses every bad credential on every non-public operation with the documented 401', async () => {
    const wrong: string[] = [];
    for (const { operation, key, row } of rowsInOrder()) {
      if (row.allowed === 'public') continue;
      const { path, built } = concrete(operation, row, await fixtureFor(row));
      // The credentials of one operation are independent requests: sent together.
      const answers = await Promise.all(
        badCredentials.map((credential) => send(operation.method, path, built, credential.authorization)),
      );
      answers.forEach((answer, i) => {
        const credential = badCredentials[i];
        if (
          answer.status !== 401 ||
          JSON.stringify(answer.body) !== JSON.stringify(failure(credential.message))
        ) {
          wrong.push(`${key} with ${credential.name} → ${describeAnswer(answer)}`);
        }
      });
    }
    expect(wrong).toEqual([]);
  });

  it('answers public operations and the docs the same whatever the Authorization header', async () => {
    const publicRoutes = rowsInOrder().filter(({ row }) => row.allowed === 'public');
    expect(publicRoutes.map(({ key }) => key).sort()).toEqual([
      'GET /api/auth/config',
      'GET /api/health',
      'GET /api/health/ready',
      'POST /api/auth/login',
    ]);
    const wrong: string[] = [];
    const check = async (key: string, method: string, path: string, built: Built, expected: number[]) => {
      const baseline = await send(method, path, built);
      if (!expected.includes(baseline.status))
        wrong.push(`${key} without a header → ${describeAnswer(baseline)}`);
      const headers = [
        ...badCredentials.map((c) => c.authorization),
        bearer(tokenFor(users.nobody)),
        bearer(ssoTokens.sso_admin),
      ];
      for (const authorization of headers) {
        const answer = await send(method, path, built, authorization);
        // A login answers a fresh token each time; everything else about the answer must not change.
        const comparable = (a: Answer) =>
          typeof a.body === 'object' && a.body?.data?.token
            ? { ...a.body, data: { ...a.body.data, token: '…', expires_at: '…' } }
            : a.body;
        if (
          answer.status !== baseline.status ||
          JSON.stringify(comparable(answer)) !== JSON.stringify(comparable(baseline))
        ) {
          wrong.push(`${key} with ${authorization ?? 'no header'} → ${describeAnswer(answer)}`);
        }
      }
      return baseline;
    };
    for (const { operation, key, row } of publicRoutes) {
      const { path, built } = concrete(operation, row, await fixtureFor(row));
      const baseline = await check(key, operation.method, path, built, successStatuses(operation));
      if (key === 'POST /api/auth/login') expect(baseline.body.data.user.id).toBe(Number(login.id));
    }
    await check(`GET ${DOCS_JSON_PATH}`, 'GET', DOCS_JSON_PATH, {}, [200]);
    await check(`GET ${DOCS_PATH}`, 'GET', DOCS_PATH, {}, [200]);
    expect(wrong).toEqual([]);
  });

  it('lets each signed-in caller do exactly what docs/api.md allows, and refuses the rest with 403', async () => {
    const wrong: string[] = [];
    let cells = 0;
    for (const { operation, key, row } of rowsInOrder()) {
      if (row.allowed === 'public') continue;
      // Each persona works on a module and target of its own: the requests of one operation are sent together.
      const found = await Promise.all(
        PERSONAS.map(async (persona) => {
          const caller = persona === 'demoted' ? undefined : users[persona];
          const f = await fixtureFor(row, caller, ROLE_OF[persona], persona);
          const { path, built } = concrete(operation, row, f);
          const answer = await send(operation.method, path, built, bearer(tokenOf(persona)));
          cells++;
          const refusal = row.refuses?.[persona];
          if (refusal !== undefined) {
            return answer.status === 403 && JSON.stringify(answer.body) === JSON.stringify(failure(refusal))
              ? []
              : [`${key} as ${persona}: expected 403 ${refusal} → ${describeAnswer(answer)}`];
          }
          if (row.allowed.includes(persona)) {
            return successStatuses(operation).includes(answer.status)
              ? []
              : [`${key} as ${persona}: expected success → ${describeAnswer(answer)}`];
          }
          return answer.status === 403 &&
            JSON.stringify(answer.body) === JSON.stringify(failure(PERMISSION_DENIED))
            ? []
            : [`${key} as ${persona}: expected 403 → ${describeAnswer(answer)}`];
        }),
      );
      wrong.push(...found.flat());
    }
    expect(wrong).toEqual([]);
    expect(cells).toBe(
      operations.filter((o) => ROUTE_ACCESS[routeKey(o.method, o.path)] !== 'public').length *
        PERSONAS.length,
    );
  });

  it('guards HEAD, which the router answers for every GET, exactly like the GET', async () => {
    const wrong: string[] = [];
    for (const { operation, row } of rowsInOrder()) {
      if (operation.method !== 'GET' || row.allowed === 'public') continue;
      for (const persona of [undefined, 'nobody', 'student'] as const) {
        const caller = persona && users[persona];
        const { path, built } = concrete(
          operation,
          row,
          await fixtureFor(row, caller, persona && ROLE_OF[persona]),
        );
        const answer = await send('HEAD', path, built, persona && bearer(tokenOf(persona)));
        const expected = !persona
          ? [401]
          : row.allowed.includes(persona)
            ? successStatuses(operation)
            : [403];
        if (!expected.includes(answer.status))
          wrong.push(`HEAD ${operation.path} as ${persona ?? 'no one'} → ${answer.status}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  describe('object level: a non-member can neither read nor change a module', () => {
    let module: ModuleRow;
    let members: Record<ModuleRole, UserRow>;
    let outsiders: { name: string; user: UserRow }[];

    beforeAll(async () => {
      const ds = app.dataSource;
      module = await makeModule(ds);
      members = {
        [ModuleRole.Lecturer]: await makeUser(ds),
        [ModuleRole.AssistantLecturer]: await makeUser(ds),
        [ModuleRole.Tutor]: await makeUser(ds),
        [ModuleRole.Student]: await makeUser(ds),
      };
      for (const [role, user] of Object.entries(members))
        await assignRole(ds, user.id, module.id, role as ModuleRole);
      await addAssignmentWithFile(app, module.id);
      // A user with no role anywhere, and the Lecturer of another module.
      const other = await makeModule(ds);
      const otherLecturer = await makeUser(ds);
      await assignRole(ds, otherLecturer.id, other.id, ModuleRole.Lecturer);
      // Lecturers of the module itself whose membership grants nothing (docs/api.md §15).
      const upcoming = await makeUser(ds);
      const inactive = await makeUser(ds);
      await assignRole(ds, upcoming.id, module.id, ModuleRole.Lecturer);
      await assignRole(ds, inactive.id, module.id, ModuleRole.Lecturer);
      await applyLifecycle(app, 'lecturer_upcoming', upcoming.id, module.id);
      await applyLifecycle(app, 'lecturer_inactive', inactive.id, module.id);
      outsiders = [
        { name: 'a user with no role', user: await makeUser(ds) },
        { name: "another module's Lecturer", user: otherLecturer },
        { name: 'an upcoming Lecturer of the module', user: upcoming },
        { name: 'an inactive Lecturer of the module', user: inactive },
      ];
    });

    /** The module as an admin reads it, its role rows, files and the audit trail. */
    async function snapshot() {
      const adminAuth = bearer(tokenFor(users.admin));
      const read = await send('GET', `/api/modules/${module.id}`, {}, adminAuth);
      const roster = await send('GET', `/api/modules/${module.id}/roster.csv`, {}, adminAuth);
      const roles = await app.dataSource.query(
        `SELECT user_id::int, role FROM user_module_roles WHERE module_id = $1 ORDER BY user_id`,
        [module.id],
      );
      const [{ events }] = await app.dataSource.query(`SELECT count(*)::int AS events FROM audit_events`);
      return {
        read: [read.status, read.body],
        roster: [roster.status, roster.body],
        roles,
        rows: await rowsOfModule(app.dataSource, module.id),
        files: await storedFiles(app.config.storageDir),
        events,
      };
    }

    /** Operations that address a module: by path id, or by a `module_ids` list in the body. */
    function addressesModule(operation: DocOperation): boolean {
      if (operation.path.includes('{module_id}')) return true;
      const body = operation.operation.requestBody as RequestBodyObject | undefined;
      const schema = body?.content?.['application/json']?.schema;
      return schema !== undefined && 'module_ids' in (deref(document, schema).properties ?? {});
    }

    it('refuses every operation addressing the module with 403 and changes nothing', async () => {
      const before = await snapshot();
      const addressing = rowsInOrder().filter(({ operation }) => addressesModule(operation));
      expect(addressing.map(({ key }) => key)).toEqual(
        expect.arrayContaining([
          'GET /api/modules/{module_id}',
          'PUT /api/modules/{module_id}',
          'DELETE /api/modules/{module_id}',
          'DELETE /api/modules/bulk',
          'POST /api/modules/{module_id}/roster/import',
          'GET /api/modules/{module_id}/roster.csv',
        ]),
      );
      const wrong: string[] = [];
      for (const { operation, key, row } of addressing) {
        for (const { name, user } of outsiders) {
          // The target is a member holding the role a removal needs, or else the outsider (adding themselves).
          const target = row.targetRole ? members[row.targetRole] : user;
          const { path, built } = concrete(operation, row, {
            module,
            target,
            unique: ++sequence,
            login,
            withAvatar,
            webhook: { id: 1 },
            token: { id: 1 },
          });
          const answer = await send(operation.method, path, built, bearer(tokenFor(user)));
          if (
            answer.status !== 403 ||
            JSON.stringify(answer.body) !== JSON.stringify(failure(PERMISSION_DENIED))
          ) {
            wrong.push(`${key} as ${name} → ${describeAnswer(answer)}`);
          }
        }
      }
      expect(wrong).toEqual([]);
      expect(await snapshot()).toEqual(before);
    });

    it('never shows the module to a non-member through any operation they may call', async () => {
      const before = await snapshot();
      const leaks: string[] = [];
      for (const { operation, key, row } of rowsInOrder()) {
        if (row.allowed === 'public' || !row.allowed.includes('nobody') || row.last) continue;
        for (const { name, user } of outsiders) {
          const { path, built } = concrete(operation, row, {
            module,
            target: user,
            unique: ++sequence,
            login,
            withAvatar,
            webhook: { id: 1 },
            token: { id: 1 },
          });
          for (const query of ['', `query=${module.code}`, `code=${module.code}`]) {
            const answer = await send(operation.method, path, { ...built, query }, bearer(tokenFor(user)));
            if (!successStatuses(operation).includes(answer.status)) {
              leaks.push(`${key}?${query} as ${name}: expected success → ${describeAnswer(answer)}`);
            }
            const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
            if (text.includes(module.code)) leaks.push(`${key}?${query} as ${name} shows ${module.code}`);
          }
        }
      }
      expect(leaks).toEqual([]);
      expect(await snapshot()).toEqual(before);
    });
  });
});
