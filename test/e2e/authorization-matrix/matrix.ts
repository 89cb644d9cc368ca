// Part of test/authorization-matrix.e2e-spec.ts: every operation × every kind of caller.
import { DOCS_JSON_PATH, DOCS_PATH } from '../../../src/openapi/setup.js';
import { tokenFor } from '../../support/factories.js';
import { failure, PERMISSION_DENIED } from '../../support/modules-fixtures.js';
import { routeKey } from '../../support/openapi.js';
import { ROUTE_ACCESS } from '../../support/route-access.js';
import { type MatrixContext } from './context.js';
import { PERSONAS, ROLE_OF } from './personas.js';
import { type Answer, type Built, concrete, REQUESTS } from './requests.js';

export function everyOperationTests(ctx: MatrixContext): void {
  const { given, send, bearer, tokenOf, fixtureFor, successStatuses, rowsInOrder, describeAnswer } = ctx;

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
        given.badCredentials.map((credential) =>
          send(operation.method, path, built, credential.authorization),
        ),
      );
      answers.forEach((answer, i) => {
        const credential = given.badCredentials[i];
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
        ...given.badCredentials.map((c) => c.authorization),
        bearer(tokenFor(given.users.nobody)),
        bearer(given.ssoTokens.sso_admin),
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
      if (key === 'POST /api/auth/login') expect(baseline.body.data.user.id).toBe(Number(given.login.id));
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
          const caller = persona === 'demoted' ? undefined : given.users[persona];
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
      given.operations.filter((o) => ROUTE_ACCESS[routeKey(o.method, o.path)] !== 'public').length *
        PERSONAS.length,
    );
  });

  it('guards HEAD, which the router answers for every GET, exactly like the GET', async () => {
    const wrong: string[] = [];
    for (const { operation, row } of rowsInOrder()) {
      if (operation.method !== 'GET' || row.allowed === 'public') continue;
      for (const persona of [undefined, 'nobody', 'student'] as const) {
        const caller = persona && given.users[persona];
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
}
