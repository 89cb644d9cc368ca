import { ValidationError } from 'class-validator';
import { validationMessages } from './validation.js';

function failure(property: string, constraints: Record<string, string>): ValidationError {
  return Object.assign(new ValidationError(), { property, constraints, children: [] });
}

describe('validationMessages', () => {
  it('keeps field order and puts unknown properties last', () => {
    const messages = validationMessages([
      failure('extra', { whitelistValidation: 'property extra should not exist' }),
      failure('code', { matches: 'Module code must be in format ABC123' }),
      failure('year', { min: 'Year must be between 1900 and 9999' }),
    ]);
    expect(messages).toEqual([
      'Module code must be in format ABC123',
      'Year must be between 1900 and 9999',
      'property extra should not exist',
    ]);
  });

  it('reports one message once even when several rules of a field share it', () => {
    const messages = validationMessages([
      failure('year', {
        isInt: 'Year must be between 1900 and 9999',
        min: 'Year must be between 1900 and 9999',
      }),
    ]);
    expect(messages).toEqual(['Year must be between 1900 and 9999']);
  });
});
