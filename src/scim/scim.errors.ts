import { AppError } from '../core/errors.js';
import { type OwnAnswers, type OwnErrorAnswer } from '../core/own-answers.js';

export const SCIM_CONTENT_TYPE = 'application/scim+json';
export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** The `scimType` values of RFC 7644 §3.12 this service answers with. */
export type ScimType =
  'invalidSyntax' | 'invalidFilter' | 'invalidPath' | 'invalidValue' | 'uniqueness' | 'noTarget';

/** An error with SCIM's `scimType` (RFC 7644 §3.12). */
export class ScimError extends AppError {
  constructor(
    status: number,
    message: string,
    readonly scimType?: ScimType,
  ) {
    super(status, message);
  }
}

export const invalidValue = (detail: string) => new ScimError(400, detail, 'invalidValue');
export const invalidSyntax = (detail: string) => new ScimError(400, detail, 'invalidSyntax');
export const invalidFilter = (detail: string) => new ScimError(400, detail, 'invalidFilter');
export const invalidPath = (detail: string) => new ScimError(400, detail, 'invalidPath');
export const uniqueness = (detail: string) => new ScimError(409, detail, 'uniqueness');
export const noTarget = (detail: string) => new ScimError(400, detail, 'noTarget');

export const SCIM_FORBIDDEN_MESSAGE = 'This token may not use SCIM';
export const SCIM_USER_NOT_FOUND_MESSAGE = 'User not found';
export const SCIM_NOT_IMPLEMENTED_MESSAGE = 'Not implemented: this service provisions Users only';

/** An integration token without the `scim` scope (docs/api.md §14). */
export const scimForbidden = () => new ScimError(403, SCIM_FORBIDDEN_MESSAGE);
export const scimUserNotFound = () => new ScimError(404, SCIM_USER_NOT_FOUND_MESSAGE);
export const SCIM_ADMIN_MESSAGE = 'Administrators are managed in the service, not through SCIM';
/** A SCIM write of an admin: a provisioning token never reaches an administrator (docs/security.md). */
export const scimAdminForbidden = () => new ScimError(403, SCIM_ADMIN_MESSAGE);

/** The SCIM error body: `{schemas, status, scimType?, detail}`, `status` a string (RFC 7644 §3.12). */
export function scimErrorBody(status: number, detail: string, scimType?: ScimType): Record<string, unknown> {
  const body: Record<string, unknown> = { schemas: [SCIM_ERROR_SCHEMA], status: String(status) };
  if (scimType !== undefined) body.scimType = scimType;
  body.detail = detail;
  return body;
}

/**
 * How SCIM routes answer every error, those of the HTTP layer included: a body that is not JSON is
 * `invalidSyntax`; 401, 404, 413, 415 and 500 carry the service's message as `detail`.
 */
export const scimAnswers: OwnAnswers = {
  error(status: number, message: string, error: unknown): OwnErrorAnswer {
    const scimType =
      error instanceof ScimError ? error.scimType : status === 400 ? 'invalidSyntax' : undefined;
    return { body: scimErrorBody(status, message, scimType), contentType: SCIM_CONTENT_TYPE };
  },
};
