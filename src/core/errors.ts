/**
 * An error with an HTTP meaning. Features subclass it with a name (`ModuleNotFound`); the exception filter
 * turns it into the envelope `{ success: false, data, message }` with its status.
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
