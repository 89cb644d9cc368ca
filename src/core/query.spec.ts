import { ValidationFailed } from './errors.js';
import { INVALID_SORT_MESSAGE, parseInt32, parseSort, QueryReader, toPaging } from './query.js';

describe('parseInt32', () => {
  it.each([
    ['0', 0],
    ['42', 42],
    ['-7', -7],
    ['007', 7],
    ['2147483647', 2147483647],
    ['-2147483648', -2147483648],
  ])('reads %s as %d', (text, value) => expect(parseInt32(text)).toBe(value));

  it.each([
    '+5',
    '1e3',
    '5.0',
    '',
    ' 5',
    '5 ',
    '0x10',
    '2147483648',
    '-2147483649',
    'abc',
    '4294967296',
    '--1',
  ])('refuses %j', (text) => expect(parseInt32(text)).toBeUndefined());
});

describe('toPaging', () => {
  it.each([
    [1, 20, { page: 1, perPage: 20, offset: 0 }],
    [3, 10, { page: 3, perPage: 10, offset: 20 }],
    [0, 0, { page: 1, perPage: 1, offset: 0 }],
    [-5, 1000, { page: 1, perPage: 100, offset: 0 }],
  ])('clamps page %d, per_page %d', (page, perPage, expected) =>
    expect(toPaging(page, perPage)).toEqual(expected),
  );
});

describe(QueryReader.name, () => {
  it('uses defaults when nothing is given', () => {
    const reader = new QueryReader({});
    expect(reader.paging()).toEqual({ page: 1, perPage: 20, offset: 0 });
    expect(() => reader.done()).not.toThrow();
  });

  it('collects every invalid parameter into one message, in order', () => {
    const reader = new QueryReader({ page: 'x', per_page: '1.5', year: '+5' });
    reader.paging();
    reader.int('year');
    expect(() => reader.done()).toThrow(
      new ValidationFailed('page must be an integer; per_page must be an integer; year must be an integer'),
    );
  });

  it('refuses a repeated parameter', () => {
    const reader = new QueryReader({ page: ['1', '2'], query: ['a', 'b'] });
    reader.paging();
    reader.string('query');
    expect(() => reader.done()).toThrow('page must be an integer; query must be given at most once');
  });

  it('refuses a NUL character in a text parameter (PostgreSQL text cannot hold it)', () => {
    const reader = new QueryReader({ query: 'a\u0000b', code: 'ok' });
    expect(reader.string('query')).toBeUndefined();
    expect(reader.string('code')).toBe('ok');
    expect(() => reader.done()).toThrow('query must not contain NUL characters');
  });

  it("joins a feature's own messages in the order parameters are read", () => {
    const reader = new QueryReader({ page: 'x', role: 'boss' });
    reader.paging();
    reader.invalid('role must be one of Lecturer, AssistantLecturer, Tutor, Student');
    expect(() => reader.done()).toThrow(
      'page must be an integer; role must be one of Lecturer, AssistantLecturer, Tutor, Student',
    );
  });

  it('reads booleans strictly', () => {
    const reader = new QueryReader({ a: 'true', b: 'false', c: 'yes' });
    expect([reader.boolean('a'), reader.boolean('b'), reader.boolean('c')]).toEqual([true, false, undefined]);
    expect(() => reader.done()).toThrow('c must be true or false');
  });
});

describe('parseSort', () => {
  const fields = { code: 'm.code', year: 'm.year' };

  it('reads fields, directions and skips blank entries', () => {
    expect(parseSort(' code , ,-year,', fields)).toEqual([
      { column: 'm.code', descending: false },
      { column: 'm.year', descending: true },
    ]);
    expect(parseSort(undefined, fields)).toEqual([]);
    // A repeated field cannot change the order: it is dropped (its direction included), still validated.
    expect(parseSort('year,code,-year,code,year', fields)).toEqual([
      { column: 'm.year', descending: false },
      { column: 'm.code', descending: false },
    ]);
    expect(() => parseSort('code,code,nope', fields)).toThrow(new ValidationFailed(INVALID_SORT_MESSAGE));
    expect(parseSort('', fields)).toEqual([]);
  });

  it.each(['--code', 'code desc', 'name', '-', '+code', 'CODE', 'constructor', 'toString'])(
    'refuses %j',
    (raw) => {
      expect(() => parseSort(raw, fields)).toThrow(new ValidationFailed(INVALID_SORT_MESSAGE));
    },
  );
});
