import { canonicalJson, IDEMPOTENCY_KEY, requestFingerprint, withoutSecrets } from './fingerprint.js';

describe(requestFingerprint.name, () => {
  it('is the same for the same JSON value however its text is written', () => {
    expect(canonicalJson(JSON.parse('{"b": [1, {"d": 2, "c": null}], "a": "x"}'))).toBe(
      '{"a":"x","b":[1,{"c":null,"d":2}]}',
    );
    expect(requestFingerprint('POST', '/api/modules', { code: 'A', year: 1 })).toEqual(
      requestFingerprint('POST', '/api/modules', { year: 1, code: 'A' }),
    );
  });

  it('differs with the method, the path, the query or the body', () => {
    const one = requestFingerprint('POST', '/api/modules?x=1', { code: 'A' });
    expect(requestFingerprint('POST', '/api/modules?x=2', { code: 'A' })).not.toEqual(one);
    expect(requestFingerprint('POST', '/api/users?x=1', { code: 'A' })).not.toEqual(one);
    expect(requestFingerprint('PUT', '/api/modules?x=1', { code: 'A' })).not.toEqual(one);
    expect(requestFingerprint('POST', '/api/modules?x=1', { code: 'B' })).not.toEqual(one);
    expect(requestFingerprint('POST', '/api/modules?x=1', Buffer.from('{"code":"A"}'))).not.toEqual(one);
  });
});

describe(withoutSecrets.name, () => {
  it('nulls token, secret and password wherever they are, and keeps the rest', () => {
    expect(
      withoutSecrets({
        success: true,
        data: {
          id: 1,
          token: 'mas_x',
          rows: [{ row: 2, password: 'p', username: 'u' }],
          nested: { secret: 's' },
        },
        message: 'ok',
      }),
    ).toEqual({
      success: true,
      data: {
        id: 1,
        token: null,
        rows: [{ row: 2, password: null, username: 'u' }],
        nested: { secret: null },
      },
      message: 'ok',
    });
  });
});

describe('IDEMPOTENCY_KEY', () => {
  it('takes 1-255 visible ASCII characters only', () => {
    expect(IDEMPOTENCY_KEY.test('a')).toBe(true);
    expect(IDEMPOTENCY_KEY.test('~'.repeat(255))).toBe(true);
    for (const bad of ['', 'a'.repeat(256), 'a b', 'é', 'a\tb'])
      expect(IDEMPOTENCY_KEY.test(bad)).toBe(false);
  });
});
