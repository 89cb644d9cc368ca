/** The body of every failure outside SCIM (docs/api.md §1), its keys in the order they are written. */
export interface ErrorEnvelope {
  success: false;
  data: unknown;
  message: string;
}

/** The one writer of the error envelope: the exception filter and the Fastify plumbing (src/http) alike. */
export function errorEnvelope(message: string, data: unknown = null): ErrorEnvelope {
  return { success: false, data, message };
}

/**
 * An error with an HTTP meaning. Features subclass it with a name (`ModuleNotFound`); the exception filter
 * turns it into the envelope ({@link errorEnvelope}) with its status.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly data: unknown = null,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * The base class of an error that always answers `status` with `message`:
 * `export class UserNotFound extends fixedError(404, USER_NOT_FOUND_MESSAGE) {}`.
 */
export function fixedError(status: number, message: string) {
  return class extends AppError {
    constructor() {
      super(status, message);
    }
  };
}

export const PERMISSION_DENIED_MESSAGE = 'You do not have permission to perform this action';
export const INTERNAL_ERROR_MESSAGE = 'An internal server error occurred';
export const AUTHENTICATION_REQUIRED_MESSAGE = 'Authentication required';
export const INVALID_TOKEN_MESSAGE = 'Invalid or expired token';
/** The answers of the HTTP layer to the framing of a body (docs/api.md §1, step 0). */
export const MALFORMED_JSON_MESSAGE = 'Malformed JSON body';
export const UNSUPPORTED_CONTENT_TYPE_MESSAGE = 'Unsupported content type';
export const REQUEST_BODY_TOO_LARGE_MESSAGE = 'Request body too large';
export const NOT_A_JSON_OBJECT_MESSAGE = 'Request body must be a JSON object';
export const CONTENT_LENGTH_MISMATCH_MESSAGE = 'Content-Length does not match the body';
/** The answers of the HTTP layer to a request no route takes, or that could not be read in time. */
export const ROUTE_NOT_FOUND_MESSAGE = 'Route not found';
export const REQUEST_NOT_PROCESSED_MESSAGE = 'The request could not be processed';
export const REQUEST_TIMEOUT_MESSAGE = 'Request timeout';
export const MALFORMED_URL_MESSAGE = 'Malformed URL: the path is not valid percent-encoding';
export const PATH_PARAMETER_TOO_LONG_MESSAGE = 'A path parameter is too long';
/** The validation pipe's answer to a body property no DTO declares, as documented (`<name>` the property). */
export const UNKNOWN_PROPERTY_MESSAGE = 'property <name> should not exist';
/** An update (PUT/PATCH) without any field to change. */
export const NOTHING_TO_UPDATE_MESSAGE = 'At least one field must be provided';

export class ValidationFailed extends AppError {
  constructor(message: string) {
    super(400, message);
  }
}

export class AuthenticationRequired extends fixedError(401, AUTHENTICATION_REQUIRED_MESSAGE) {}

export class InvalidToken extends fixedError(401, INVALID_TOKEN_MESSAGE) {}

export class PermissionDenied extends fixedError(403, PERMISSION_DENIED_MESSAGE) {}

/** A failure of the database or another dependency, answered with the route's 500 message. */
export class InternalFailure extends AppError {
  constructor(
    message: string = INTERNAL_ERROR_MESSAGE,
    readonly reason?: unknown,
  ) {
    super(500, message);
  }
}
