import { hasMediaType } from './content-type-only.js';

describe(hasMediaType.name, () => {
  it.each([
    ['multipart/form-data; boundary=x', true],
    ['Multipart/Form-Data; boundary=x', true],
    ['multipart/form-data', true],
    ['multipart/mixed; boundary=x', false],
    ['application/json', false],
    ['text/plain', false],
    [undefined, false],
  ])('%s is multipart/form-data: %s', (header, expected) => {
    expect(hasMediaType(header, ['multipart/form-data'])).toBe(expected);
  });

  it.each([
    ['text/csv; charset=utf-8', true],
    ['multipart/form-data; boundary=x', true],
    ['application/json', false],
  ])('%s is CSV or multipart: %s', (header, expected) => {
    expect(hasMediaType(header, ['text/csv', 'multipart/form-data'])).toBe(expected);
  });
});
