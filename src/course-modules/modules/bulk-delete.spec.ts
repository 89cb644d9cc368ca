import { bulkDeleteMessage, bulkDeleteResult, candidateIds } from './bulk-delete.js';

describe('candidateIds', () => {
  it('keeps each positive id once, as exact decimal strings, in first-seen order', () => {
    expect(candidateIds([5, 3, 5, 0, -2, 3, 9007199254740991])).toEqual(['5', '3', '9007199254740991']);
  });

  it('drops 2^63, where a rounded JSON number just under it lands', () => {
    expect(candidateIds([2 ** 63, 2 ** 62])).toEqual([String(2n ** 62n)]);
  });
});

describe('bulkDeleteResult', () => {
  it('reports failures in request order: not found first time, duplicate after', () => {
    const result = bulkDeleteResult([4, 7, 0, 4, 7, -1, 9, 9], new Set(['4', '9']));
    expect(result).toEqual({
      deleted: 2,
      failed: [
        { id: 7, error: 'Module not found' },
        { id: 0, error: 'Module not found' },
        { id: 4, error: 'Duplicate module ID' },
        { id: 7, error: 'Duplicate module ID' },
        { id: -1, error: 'Module not found' },
        { id: 9, error: 'Duplicate module ID' },
      ],
    });
    expect(bulkDeleteMessage(result, 8)).toBe('Deleted 2/8 modules');
  });

  it('reports nothing failed when every id was deleted once', () => {
    expect(bulkDeleteResult([1, 2], new Set(['1', '2']))).toEqual({ deleted: 2, failed: [] });
  });
});
