import { userListProblem } from './bulk-create-users.dto.js';

const entry = (overrides: Record<string, unknown> = {}) => ({
  username: 'valid.name',
  email: 'valid@example.edu',
  password: 'long-enough',
  ...overrides,
});

describe(userListProblem.name, () => {
  it('accepts 1 to 500 valid entries', () => {
    expect(userListProblem([entry()])).toBeUndefined();
    expect(userListProblem(Array.from({ length: 500 }, () => entry()))).toBeUndefined();
  });

  it('refuses a missing, empty, oversized or non-array list', () => {
    expect(userListProblem(undefined)).toBe('At least one user is required');
    expect(userListProblem([])).toBe('At least one user is required');
    expect(userListProblem(Array.from({ length: 501 }, () => entry()))).toBe(
      'At most 500 users are allowed per request',
    );
    expect(userListProblem({ 0: entry() })).toBe('users must be an array of users');
    expect(userListProblem(null)).toBe('users must be an array of users');
  });

  it('names each failing entry by index, every message prefixed', () => {
    expect(
      userListProblem([entry({ password: 'short' }), entry(), entry({ email: 'x', admin: 'no' }), 7]),
    ).toBe(
      'users[0]: Password must be 8-128 characters; users[2]: Email must be a valid email address; ' +
        'users[2]: admin must be a boolean; users[3]: User must be a JSON object',
    );
  });

  it('refuses unknown properties of an entry', () => {
    expect(userListProblem([entry({ role: 'Student' })])).toBe('users[0]: property role should not exist');
  });
});
