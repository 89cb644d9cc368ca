// What the parts of test/authorization-matrix.e2e-spec.ts share: the served document, a user of every persona,
// the bad credentials, and helpers that build and send one request.
import { type OpenAPIObject } from '@nestjs/swagger';
import { type ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { type UsedTestApp } from '../../support/app.js';
import {
  assignRole,
  DEFAULT_PASSWORD,
  makeModule,
  makeUser,
  type ModuleRow,
  tokenFor,
  unsignedToken,
  type UserRow,
} from '../../support/factories.js';
import { type TestIdp } from '../../support/idp.js';
import { multipartBody } from '../../support/openapi-requests.js';
import { type DocOperation, fetchDocument, operationsOf, routeKey } from '../../support/openapi.js';
import { ROUTE_ACCESS } from '../../support/route-access.js';
import { makeIntegrationToken } from '../../support/token-fixtures.js';
import { makeWebhook } from '../../support/webhook-fixtures.js';
import { ALLOWED, applyLifecycle, type Persona, PERSONAS } from './personas.js';
import { type Answer, type Built, type Fixture, REQUESTS, type Row } from './requests.js';

let sequence = 0;

/**
 * The area's service with the served document and every persona's user made once (in `given`, by `beforeAll`), and
 * the helpers its parts share.
 */
export function useMatrix({ app }: UsedTestApp, idp: TestIdp) {
  const given = {} as {
    document: OpenAPIObject;
    operations: DocOperation[];
    users: Record<Exclude<Persona, 'demoted'>, UserRow>;
    ssoTokens: Record<'sso_admin' | 'sso_lecturer', string>;
    demotedToken: string;
    /** A user who signs in, and one with an avatar: the same for every request. */
    login: UserRow;
    withAvatar: UserRow;
    /** An access token of the test IdP for an identity nobody is bound to: the body of POST /api/auth/sso-binding. */
    linkToken: string;
    /** A header value (or none) and the 401 message docs/api.md §2 gives it. */
    badCredentials: { name: string; authorization?: string; message: string }[];
  };
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
      ? given.demotedToken
      : persona === 'sso_admin' || persona === 'sso_lecturer'
        ? given.ssoTokens[persona]
        : tokenFor(given.users[persona]);

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
    return { ...fixtureOn(module, target), webhook, token };
  }

  /** A request's fixture on a module and target user the caller made, with placeholder webhook and token ids. */
  function fixtureOn(module: ModuleRow, target: UserRow): Fixture {
    return {
      module,
      target,
      unique: ++sequence,
      login: given.login,
      withAvatar: given.withAvatar,
      linkToken: given.linkToken,
      webhook: { id: 1 },
      token: { id: 1 },
    };
  }

  const successStatuses = (operation: DocOperation) =>
    Object.keys(operation.operation.responses)
      .filter((status) => /^2\d\d$/.test(status))
      .map(Number);

  /** Every operation with its row, those that change the caller's own credentials last. */
  const rowsInOrder = () =>
    given.operations
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
    given.document = await fetchDocument(app.url);
    given.operations = operationsOf(given.document);
    await app.reset();
    const ds = app.dataSource;
    given.users = {
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
      given.users.sso_admin.id,
      idp.issuer,
      `person-${given.users.sso_admin.username.toLowerCase()}`,
    ]);
    given.linkToken = await idp.accessToken({
      preferred_username: 'authz-link',
      sub: 'authz-link-subject',
    });
    // Tokens the provider issues, naming the local users by username (in another letter case).
    given.ssoTokens = {
      sso_admin: await idp.accessToken({
        preferred_username: given.users.sso_admin.username.toUpperCase(),
      }),
      sso_lecturer: await idp.accessToken({ preferred_username: given.users.sso_lecturer.username }),
    };
    const adminAuth = bearer(tokenFor(given.users.admin));
    const asAdmin = (method: string, path: string, built: Built = {}) => send(method, path, built, adminAuth);
    given.login = await makeUser(ds);
    given.withAvatar = await makeUser(ds);
    expect(
      (await asAdmin('PUT', `/api/users/${given.withAvatar.id}/avatar`, { multipart: true })).status,
    ).toBe(200);

    // An admin signed in through the service, seen as admin once (so a cache holds it), then demoted.
    const demoted = await makeUser(ds, { admin: true });
    const signIn = await send('POST', '/api/auth/login', {
      json: { username: demoted.username, password: DEFAULT_PASSWORD },
    });
    expect(signIn.status).toBe(200);
    given.demotedToken = signIn.body.data.token;
    expect((await send('GET', '/api/users', {}, bearer(given.demotedToken))).status).toBe(200);
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
    const real = tokenFor(given.users.nobody, { secret }).split('.');
    const withClaims = (change: Record<string, unknown>) => {
      const claims = { ...JSON.parse(Buffer.from(real[1], 'base64url').toString()), ...change };
      return [real[0], Buffer.from(JSON.stringify(claims)).toString('base64url'), real[2]].join('.');
    };
    const AUTH_REQUIRED = 'Authentication required';
    const INVALID = 'Invalid or expired token';
    given.badCredentials = [
      { name: 'no Authorization header', message: AUTH_REQUIRED },
      { name: '"Bearer" without a token', authorization: 'Bearer', message: AUTH_REQUIRED },
      { name: 'Basic scheme', authorization: 'Basic YWRtaW46YWRtaW4=', message: AUTH_REQUIRED },
      { name: 'garbage header', authorization: 'garbage', message: AUTH_REQUIRED },
      {
        name: "an admin's valid token under another scheme",
        authorization: `Token ${tokenFor(given.users.admin)}`,
        message: AUTH_REQUIRED,
      },
      {
        name: "an admin's valid token followed by more text",
        authorization: `Bearer ${tokenFor(given.users.admin)} extra`,
        message: AUTH_REQUIRED,
      },
      { name: 'Bearer a.b', authorization: 'Bearer a.b', message: INVALID },
      { name: 'Bearer garbage', authorization: 'Bearer %%%not-a-token%%%', message: INVALID },
      {
        name: 'alg none',
        authorization: bearer(
          unsignedToken({ sub: Number(given.users.admin.id), admin: true, iat: now, exp: now + 3600 }),
        ),
        message: INVALID,
      },
      {
        name: 'HS256 signed with another key',
        authorization: bearer(
          tokenFor(given.users.admin, { secret: 'another-secret-that-is-long-enough-0123456789' }),
        ),
        message: INVALID,
      },
      {
        name: 'HS512 signed with the real key',
        authorization: bearer(tokenFor(given.users.admin, { secret, algorithm: 'HS512' })),
        message: INVALID,
      },
      {
        name: 'expired (real key)',
        authorization: bearer(tokenFor(given.users.admin, { secret, iat: now - 7200, expiresIn: 3600 })),
        message: INVALID,
      },
      {
        name: 'tampered payload: admin true',
        authorization: bearer(withClaims({ admin: true })),
        message: INVALID,
      },
      {
        name: "tampered payload: an admin's sub",
        authorization: bearer(withClaims({ sub: Number(given.users.admin.id) })),
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
    if (!given.operations || !given.badCredentials) return;
    console.log(
      `authorization matrix: ${given.operations.length} operations, ${given.badCredentials.length} bad credentials, ` +
        `${PERSONAS.length} valid personas; ${sent} requests sent`,
    );
  });

  return {
    app,
    given,
    send,
    bearer,
    tokenOf,
    fixtureFor,
    fixtureOn,
    successStatuses,
    rowsInOrder,
    describeAnswer,
  };
}

export type MatrixContext = ReturnType<typeof useMatrix>;
