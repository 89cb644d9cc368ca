import { parseSort } from '../core/query.js';
import { containsPattern, orderByClause, SqlParams, splitPage, whereClause } from './sql.js';

describe('orderByClause', () => {
  it('builds ORDER BY with nulls last and the id tie-breaker', () => {
    const fields = { code: 'm.code', year: 'm.year' };
    expect(orderByClause(parseSort('-year,code', fields), 'm.id')).toBe(
      'm.year DESC NULLS LAST, m.code ASC NULLS LAST, m.id ASC',
    );
    expect(orderByClause([], 'm.id')).toBe('m.id ASC');
  });
});

describe('containsPattern', () => {
  it('escapes LIKE wildcards and the escape character', () => {
    expect(containsPattern('a%b_c\\d')).toBe('%a\\%b\\_c\\\\d%');
    expect(containsPattern('')).toBe('%%');
  });
});

describe('SqlParams and whereClause', () => {
  it('numbers placeholders in the order values are added, and joins conditions with AND', () => {
    const params = new SqlParams();
    expect(whereClause([`a = ${params.add(1)}`, `b = ${params.add('x')}`])).toBe('WHERE a = $1 AND b = $2');
    expect(params.values).toEqual([1, 'x']);
    expect(whereClause([])).toBe('');
  });
});

describe('splitPage', () => {
  it('separates items from the total, and an empty page from its null row', () => {
    expect(splitPage([{ id: null, total: 7 }])).toEqual({ items: [], total: 7 });
    expect(splitPage([])).toEqual({ items: [], total: 0 });
    expect(splitPage([{ id: 1, total: '2' }])).toEqual({ items: [{ id: 1, total: '2' }], total: 2 });
  });
});
