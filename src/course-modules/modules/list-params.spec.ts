import { ValidationFailed } from '../../core/errors.js';
import { readModuleListParams, readUserListParams } from './list-params.js';
import { ModuleRole } from './module-role.js';

const messageOf = (read: () => unknown) => {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationFailed);
    return (error as ValidationFailed).message;
  }
  throw new Error('expected a 400');
};

describe('readModuleListParams', () => {
  it('reads defaults', () => {
    expect(readModuleListParams({})).toEqual({
      paging: { page: 1, perPage: 20, offset: 0 },
      query: undefined,
      code: undefined,
      year: undefined,
      sort: [],
    });
  });

  it('reads filters, clamped paging and sort', () => {
    expect(
      readModuleListParams({
        page: '3',
        per_page: '500',
        query: 'a%',
        code: 'CS',
        year: '-7',
        sort: '-year, code',
      }),
    ).toEqual({
      paging: { page: 3, perPage: 100, offset: 200 },
      query: 'a%',
      code: 'CS',
      year: -7,
      sort: [
        { column: 'm.year', descending: true },
        { column: 'm.code', descending: false },
      ],
    });
  });

  it('joins parameter errors and reports sort alone afterwards', () => {
    expect(messageOf(() => readModuleListParams({ page: 'x', year: '1.5', sort: 'bad' }))).toBe(
      'page must be an integer; year must be an integer',
    );
    expect(messageOf(() => readModuleListParams({ query: ['a', 'b'], code: 'a\u0000' }))).toBe(
      'query must be given at most once; code must not contain NUL characters',
    );
    expect(messageOf(() => readModuleListParams({ sort: 'id' }))).toBe('Invalid field used for sorting');
  });
});

describe('readUserListParams', () => {
  it('reads role in any accepted spelling when asked to', () => {
    expect(readUserListParams({ role: 'assistant_lecturer' }, true).role).toBe(ModuleRole.AssistantLecturer);
    expect(readUserListParams({ role: 'bogus' }, false).role).toBeUndefined();
  });

  it('rejects an unknown role after the paging errors, and sorts over user fields', () => {
    expect(messageOf(() => readUserListParams({ per_page: 'x', role: 'Dean' }, true))).toBe(
      'per_page must be an integer; role must be one of Lecturer, AssistantLecturer, Tutor, Student',
    );
    expect(readUserListParams({ sort: '-username,email' }, true).sort).toEqual([
      { column: 'lower(u.username)', descending: true },
      { column: 'u.email', descending: false },
    ]);
    expect(messageOf(() => readUserListParams({ sort: 'code' }, false))).toBe(
      'Invalid field used for sorting',
    );
  });
});
