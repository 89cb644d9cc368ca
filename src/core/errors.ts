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

export const PERMISSION_DENIED_MESSAGE = 'You do not have permission to perform this action';
export const INTERNAL_ERROR_MESSAGE = 'An internal server error occurred';

export class ValidationFailed extends AppError {
  constructor(message: string) {
    super(400, message);
  }
}

export class AuthenticationRequired extends AppError {
  constructor() {
    super(401, 'Authentication required');
  }
}

export class InvalidToken extends AppError {
  constructor() {
    super(401, 'Invalid or expired token');
  }
}

export class PermissionDenied extends AppError {
  constructor() {
    super(403, PERMISSION_DENIED_MESSAGE);
  }
}

/** A failure of the database or another dependency, answered with the route's 500 message. */
export class InternalFailure extends AppError {
  constructor(
    message: string = INTERNAL_ERROR_MESSAGE,
    readonly reason?: unknown,
  ) {
    super(500, message);
  }
}
