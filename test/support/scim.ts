import { type DataSource } from 'typeorm';
import { type ApiResponse, request } from './http.js';
import { makeIntegrationToken } from './token-fixtures.js';
import { type TestApp } from './app.js';

export const SCIM = '/api/scim/v2';
export const SCIM_CONTENT_TYPE = 'application/scim+json';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** One request as an identity provider sends it: method, path under /api/scim/v2 (query included), body. */
export interface ScimCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
}

/** A ListResponse with no resources on its page: none at all, or none past `count=0` of `totalResults`. */
export const emptyListResponse = (totalResults = 0) => ({
  schemas: [LIST_SCHEMA],
  totalResults,
  startIndex: 1,
  itemsPerPage: 0,
  Resources: [],
});

/** The answer to creating a user again (a replay's duplicate step): 409 with scimType `uniqueness`. */
export function expectUniquenessConflict(res: ApiResponse): void {
  expect(res.status).toBe(409);
  expect(res.body.scimType).toBe('uniqueness');
}

/** A PatchOp request body (RFC 7644 §3.5.2) with these operations. */
export const patchBody = (...operations: unknown[]) => ({ schemas: [PATCH_SCHEMA], Operations: operations });

/** A SCIM error body as RFC 7644 §3.12 writes it. */
export const scimError = (status: number, detail: string, scimType?: string) => ({
  schemas: [ERROR_SCHEMA],
  status: String(status),
  ...(scimType === undefined ? {} : { scimType }),
  detail,
});

/** A client of the SCIM routes with an integration token, sending `application/scim+json` as IdPs do. */
export function scimClient(baseUrl: () => string, token: () => string) {
  return (call: ScimCall, headers: Record<string, string> = {}): Promise<ApiResponse> =>
    request(baseUrl(), call.method, `${SCIM}${call.path}`, {
      token: token(),
      body: call.body,
      headers: call.body === undefined ? headers : { 'content-type': SCIM_CONTENT_TYPE, ...headers },
    });
}

/** An integration token with the `scim` scope, stored directly. */
export const makeScimToken = async (dataSource: DataSource) =>
  (await makeIntegrationToken(dataSource, ['scim'])).token;

/**
 * A fresh directory and a fresh `scim` token before each test of the file, a client sending with that token, and
 * `replay` of an identity provider's steps through it. `app` is what `useTestApp` returns.
 */
export function useScimClient(app: TestApp) {
  let token = '';
  beforeEach(async () => {
    await app.reset();
    await app.dataSource.query('TRUNCATE integration_tokens');
    token = await makeScimToken(app.dataSource);
  });
  const scim = scimClient(
    () => app.url,
    () => token,
  );
  return {
    scim,
    /** The token of the current test. */
    token: () => token,
    replay: (steps: ReplayStep[], seen: Record<string, string> = {}) => replay(scim, steps, seen),
  };
}

/** One call of an identity provider's replayed sequence, and what its own test asserts of the answer. */
export interface ReplayStep extends ScimCall {
  name: string;
  expect: (res: ApiResponse, seen: Record<string, string>) => void;
}

/** `value` with every `{name}` (in strings, paths and bodies) replaced by what an earlier answer gave as `seen[name]`. */
export function fillPlaceholders<T>(value: T, seen: Record<string, string>): T {
  return JSON.parse(
    JSON.stringify(value).replace(/\{([A-Za-z]+)\}/g, (whole, name: string) => seen[name] ?? whole),
  ) as T;
}

/**
 * Sends `steps` in order through `scim`, filling placeholders from `seen` (which the steps' checks add to); a
 * failed check names its step and shows the answer. Answers the log of calls and statuses, printed when
 * SCIM_REPLAY_LOG is set.
 */
async function replay(
  scim: ReturnType<typeof scimClient>,
  steps: ReplayStep[],
  seen: Record<string, string> = {},
): Promise<string[]> {
  const log: string[] = [];
  for (const step of steps) {
    const call = fillPlaceholders({ method: step.method, path: step.path, body: step.body }, seen);
    const res = await scim(call);
    log.push(`${call.method} ${decodeURIComponent(call.path.replace(/\+/g, ' '))} → ${res.status}`);
    try {
      step.expect(res, seen);
    } catch (error) {
      throw new Error(`${step.name}: ${(error as Error).message}\n${JSON.stringify(res.body)}`);
    }
  }
  if (process.env.SCIM_REPLAY_LOG) console.log(log.join('\n'));
  return log;
}
