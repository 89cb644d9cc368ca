import { type ScimError } from './scim.errors.js';
import { parseFilter } from './scim-filter.js';

const scimTypeOf = (text: string) => {
  try {
    parseFilter(text);
    return 'parsed';
  } catch (error) {
    return (error as ScimError).scimType;
  }
};

describe(parseFilter.name, () => {
  it.each([
    ['userName eq "jane"', [{ attribute: 'userName', value: 'jane' }]],
    ['USERNAME EQ "Jane"', [{ attribute: 'userName', value: 'Jane' }]],
    ['urn:ietf:params:scim:schemas:core:2.0:User:userName eq "j"', [{ attribute: 'userName', value: 'j' }]],
    ['externalId eq "A-1"', [{ attribute: 'externalId', value: 'A-1' }]],
    ['id eq "42"', [{ attribute: 'id', value: '42' }]],
    ['emails.value eq "a@b.c"', [{ attribute: 'email', value: 'a@b.c' }]],
    ['emails[type eq "work"].value eq "a@b.c"', [{ attribute: 'email', value: 'a@b.c' }]],
    ['emails[TYPE EQ "Work"].VALUE eq "a@b.c"', [{ attribute: 'email', value: 'a@b.c' }]],
    [
      'userName eq "say \\"hi\\" and" and externalId eq "x"',
      [
        { attribute: 'userName', value: 'say "hi" and' },
        { attribute: 'externalId', value: 'x' },
      ],
    ],
    [
      '  userName   eq   "a"   AND   id eq "1"  ',
      [
        { attribute: 'userName', value: 'a' },
        { attribute: 'id', value: '1' },
      ],
    ],
  ])('parses %s', (text, expected) => {
    expect(parseFilter(text)).toEqual(expected);
  });

  it.each([
    '',
    'userName',
    'userName eq',
    'userName eq jane',
    'userName eq 5',
    'userName eq true',
    'userName eq "jane',
    'userName ne "jane"',
    'userName co "j"',
    'userName pr',
    'userName eq "a" or userName eq "b"',
    '(userName eq "a")',
    'not (userName eq "a")',
    'displayName eq "Jane"',
    'name.givenName eq "Jane"',
    'emails[type eq "home"].value eq "a@b.c"',
    'emails[type eq "work"] eq "a@b.c"',
    'userName eq "a" and',
    'userName eq "a" externalId eq "b"',
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "CS"',
  ])('refuses %j with invalidFilter', (text) => {
    expect(scimTypeOf(text)).toBe('invalidFilter');
  });

  it.each([
    'userName eq "a\u0000b"',
    'userName eq "a\\u0000b"',
    'externalId eq "\\u001f"',
    'userName eq "a\u007f"',
    'userName eq "a\\u0085"',
    'userName\teq "a"',
    'userName eq "a"\u0000',
  ])('refuses %j, a control character, written or escaped, with invalidFilter', (text) => {
    expect(scimTypeOf(text)).toBe('invalidFilter');
  });
});
