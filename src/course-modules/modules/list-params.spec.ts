import { ValidationFailed } from '../../core/errors.js';
import { readModuleListParams } from './list-params.js';

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
