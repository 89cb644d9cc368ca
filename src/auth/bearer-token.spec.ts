import { bearerToken } from './bearer-token.js';

const extract = (authorization?: string) => bearerToken({ headers: { authorization } });

describe(bearerToken.name, () => {
  it('takes the token of a Bearer header, the scheme in any letter case', () => {
    expect(extract('Bearer a.b.c')).toBe('a.b.c');
    expect(extract('bearer a.b.c')).toBe('a.b.c');
    expect(extract('BEARER  a.b.c')).toBe('a.b.c');
  });

  it('refuses a missing header, another scheme or a scheme without a token', () => {
    expect(extract(undefined)).toBeNull();
    expect(extract('Basic YWRtaW46YWRtaW4=')).toBeNull();
    expect(extract('Token a.b.c')).toBeNull();
    expect(extract('Bearer')).toBeNull();
    expect(extract('a.b.c')).toBeNull();
  });

  it('refuses a header with anything after the token', () => {
    expect(extract('Bearer a.b.c extra')).toBeNull();
    expect(extract('Bearer a.b.c Bearer d.e.f')).toBeNull();
    expect(extract('Basic x Bearer a.b.c')).toBeNull();
  });
});
