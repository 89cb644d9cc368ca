import { pageCountsOf, pageLinks } from './paging-links.js';

describe(pageLinks.name, () => {
  const base = 'https://modules.uni.edu';

  it('links first, prev, next and last, keeping the other parameters as given', () => {
    expect(
      pageLinks(base, '/api/modules?query=a%25b&page=2&sort=-code&per_page=150', {
        page: 2,
        per_page: 100,
        total: 450,
      }),
    ).toBe(
      [
        '<https://modules.uni.edu/api/modules?query=a%25b&sort=-code&page=1&per_page=100>; rel="first"',
        '<https://modules.uni.edu/api/modules?query=a%25b&sort=-code&page=1&per_page=100>; rel="prev"',
        '<https://modules.uni.edu/api/modules?query=a%25b&sort=-code&page=3&per_page=100>; rel="next"',
        '<https://modules.uni.edu/api/modules?query=a%25b&sort=-code&page=5&per_page=100>; rel="last"',
      ].join(', '),
    );
  });

  it('has no prev on page 1 and no next on the last page; an empty list has one page', () => {
    expect(pageLinks(base, '/api/users', { page: 1, per_page: 20, total: 0 })).toBe(
      '<https://modules.uni.edu/api/users?page=1&per_page=20>; rel="first", ' +
        '<https://modules.uni.edu/api/users?page=1&per_page=20>; rel="last"',
    );
  });

  it('drops page and per_page however they are spelled, and empty parameters', () => {
    expect(
      pageLinks(base, '/api/audit?%70age=3&&per%5Fpage&action=x', { page: 1, per_page: 20, total: 20 }),
    ).toBe(
      '<https://modules.uni.edu/api/audit?action=x&page=1&per_page=20>; rel="first", ' +
        '<https://modules.uni.edu/api/audit?action=x&page=1&per_page=20>; rel="last"',
    );
  });

  it('gives a page past the end a prev and no next', () => {
    expect(pageLinks(base, '/api/users?page=9', { page: 9, per_page: 20, total: 21 })).toBe(
      '<https://modules.uni.edu/api/users?page=1&per_page=20>; rel="first", ' +
        '<https://modules.uni.edu/api/users?page=8&per_page=20>; rel="prev", ' +
        '<https://modules.uni.edu/api/users?page=2&per_page=20>; rel="last"',
    );
  });
});

describe(pageCountsOf.name, () => {
  it('reads page, per_page and total of a page, and nothing of anything else', () => {
    expect(pageCountsOf({ users: [], page: 1, per_page: 20, total: 0 })).toEqual({
      page: 1,
      per_page: 20,
      total: 0,
    });
    expect(pageCountsOf({ users: [] })).toBeUndefined();
    expect(pageCountsOf(null)).toBeUndefined();
  });
});
