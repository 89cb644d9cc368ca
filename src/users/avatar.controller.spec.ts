import { matchesEtag } from './avatar.controller.js';

describe(matchesEtag.name, () => {
  const etag = '"abc"';

  it.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['*', true],
    ['"abd"', false],
    ['abc', false],
    ['', false],
  ])('If-None-Match %j matches: %s', (header, expected) => {
    expect(matchesEtag(header, etag)).toBe(expected);
  });

  it('does not match when the header is absent', () => {
    expect(matchesEtag(undefined, etag)).toBe(false);
  });
});
