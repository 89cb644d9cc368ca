import { parseSort } from '../core/query.js';
import { QueryFailedError } from 'typeorm';
import {
  containsPattern,
  isStatementError,
  orderByClause,
  SqlParams,
  splitPage,
  whereClause,
} from './sql.js';

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

describe('isStatementError', () => {
  const pgError = (code: string) => Object.assign(new Error('failed'), { code });

  it('is true for what PostgreSQL rejected in the statement, directly or wrapped by TypeORM', () => {
    expect(isStatementError(pgError('42P01'))).toBe(true); // undefined table
    expect(isStatementError(pgError('42501'))).toBe(true); // insufficient privilege
    expect(isStatementError(new QueryFailedError('SELECT 1', [], pgError('22P02')))).toBe(true);
  });

  it('is false when the database could not run it, and for errors without a SQLSTATE', () => {
    for (const code of ['57014', '57P01', '08006', '53300', '58030'])
      expect(isStatementError(pgError(code))).toBe(false);
    expect(isStatementError(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(isStatementError(new Error('Query read timeout'))).toBe(false);
    expect(isStatementError(undefined)).toBe(false);
  });
});
