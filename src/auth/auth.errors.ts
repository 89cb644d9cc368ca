import { AppError } from '../core/errors.js';

export class InvalidCredentials extends AppError {
  constructor() {
    super(401, 'Invalid username or password');
  }
}

export class TooManyLoginAttempts extends AppError {
  constructor() {
    super(429, 'Too many requests, try again later');
  }
}

export class WrongCurrentPassword extends AppError {
  constructor() {
    super(401, 'Current password is incorrect');
  }
}
