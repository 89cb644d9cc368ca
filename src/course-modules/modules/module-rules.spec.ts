import {
  DESCRIPTION_MESSAGE,
  DESCRIPTION_NUL_MESSAGE,
  descriptionProblem,
  idListProblem,
  MODULE_IDS_MESSAGES,
  USER_IDS_MESSAGES,
} from './module-rules.js';

describe('descriptionProblem', () => {
  it('counts Unicode code points, as PostgreSQL varchar does', () => {
    expect(descriptionProblem('x'.repeat(1000))).toBeUndefined();
    expect(descriptionProblem('😀'.repeat(1000))).toBeUndefined();
    expect(descriptionProblem('e\u0301'.repeat(500))).toBeUndefined();
    expect(descriptionProblem('x'.repeat(1001))).toBe(DESCRIPTION_MESSAGE);
    expect(descriptionProblem('😀'.repeat(1001))).toBe(DESCRIPTION_MESSAGE);
    expect(descriptionProblem('❤\uFE0F'.repeat(501))).toBe(DESCRIPTION_MESSAGE);
  });

  it('allows an empty string and refuses non-strings and NUL', () => {
    expect(descriptionProblem('')).toBeUndefined();
    expect(descriptionProblem(12)).toBe(DESCRIPTION_MESSAGE);
    expect(descriptionProblem(['a'])).toBe(DESCRIPTION_MESSAGE);
    expect(descriptionProblem('a\u0000')).toBe(DESCRIPTION_NUL_MESSAGE);
  });
});

describe('idListProblem', () => {
  const problem = (value: unknown) => idListProblem(value, MODULE_IDS_MESSAGES);

  it('accepts 1 to 1000 integers within 64 bits, zero and negatives included', () => {
    expect(problem([1])).toBeUndefined();
    expect(problem([0, -5, Number.MAX_SAFE_INTEGER, 2 ** 63, -(2 ** 63)])).toBeUndefined();
    expect(problem(Array.from({ length: 1000 }, (_, i) => i))).toBeUndefined();
  });

  it('requires a list', () => {
    for (const value of [undefined, null, []])
      expect(problem(value)).toBe('At least one module ID is required');
  });

  it('caps the list at 1000', () => {
    expect(problem(Array.from({ length: 1001 }, (_, i) => i))).toBe(
      'At most 1000 module IDs are allowed per request',
    );
    // The count is checked before the elements.
    expect(problem(Array.from({ length: 1001 }, () => 'x'))).toBe(
      'At most 1000 module IDs are allowed per request',
    );
  });

  it('refuses anything but an array of integers within 64 bits', () => {
    for (const value of [5, '1', { 0: 1 }, ['1'], [1.5], [NaN], [Infinity], [2 ** 64], [true], [null]]) {
      expect(problem(value)).toBe('module_ids must be an array of 64-bit integers');
    }
  });

  it('names user ids in the user messages', () => {
    expect(idListProblem([], USER_IDS_MESSAGES)).toBe('At least one user ID is required');
    expect(idListProblem(['a'], USER_IDS_MESSAGES)).toBe('user_ids must be an array of 64-bit integers');
  });
});
