import { isMultipartFormData } from './multipart-only.middleware.js';

describe(isMultipartFormData.name, () => {
  it.each([
    ['multipart/form-data; boundary=x', true],
    ['Multipart/Form-Data; boundary=x', true],
    ['multipart/form-data', true],
    ['multipart/mixed; boundary=x', false],
    ['application/json', false],
    ['text/plain', false],
    [undefined, false],
  ])('%s → %s', (header, expected) => {
    expect(isMultipartFormData(header)).toBe(expected);
  });
});
