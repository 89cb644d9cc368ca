import { type DataSource } from 'typeorm';
import { type ApiResponse, request } from './http.js';
import { makeIntegrationToken } from './token-fixtures.js';

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
