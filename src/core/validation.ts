import { type ArgumentMetadata, Injectable, ValidationPipe } from '@nestjs/common';
import { type ValidationError } from 'class-validator';
import { ValidationFailed } from './errors.js';

/**
 * Every failing property's message, in field order, unknown properties last, joined by `; `.
 * Nested errors are prefixed with their path (`users[0]: …`) by the caller where the contract says so.
 */
export function validationMessages(errors: ValidationError[]): string[] {
  const known: string[] = [];
  const unknown: string[] = [];
  for (const error of errors) {
    const constraints = Object.entries(error.constraints ?? {});
    for (const [name, message] of constraints)
      (name === 'whitelistValidation' ? unknown : known).push(message);
    if (constraints.length === 0 && error.children?.length) known.push(...validationMessages(error.children));
  }
  return [...new Set(known), ...unknown];
}

export const VALIDATOR_OPTIONS = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  // One message per property: the first rule that fails (rules of a field share their message).
  stopAtFirstError: true,
} as const;

/** Strict body validation: no implicit conversion, objects only, unknown properties rejected. */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({
      ...VALIDATOR_OPTIONS,
      transform: true,
      transformOptions: { enableImplicitConversion: false },
      validateCustomDecorators: false,
      exceptionFactory: (errors) => new ValidationFailed(validationMessages(errors).join('; ')),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && metadata.metatype && metadata.metatype !== Object) {
      if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) {
        throw new ValidationFailed('Request body must be a JSON object');
      }
    }
    // Query and path values are read by the helpers in query.ts and IdPipe, not converted here.
    if (metadata.type !== 'body') return value;
    return super.transform(value, metadata);
  }
}
