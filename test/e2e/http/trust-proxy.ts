// Part of test/http.e2e-spec.ts: the client address with TRUST_PROXY unset, an address, or a number of hops.
import { type TestApp, type UsedTestApp } from '../../support/app.js';
import { DEFAULT_PASSWORD, makeUser, type UserRow } from '../../support/factories.js';
import { client } from '../../support/http.js';

const login = (url: string, username: string, password: string, forwardedFor?: string) =>
  client(url).post('/api/auth/login', {
    body: { username, password },
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
  });

/** Ten failed logins for ten different usernames (so only the address key fills up). */
async function failTenTimes(url: string, forwardedFor: string) {
  for (let i = 0; i < 10; i++) {
    expect((await login(url, `nobody-${i}`, 'wrong-password', forwardedFor)).status).toBe(401);
  }
}

/** A user made before the `describe`'s tests; signing them in with their password, seen as from `forwardedFor`. */
function useUserLogin(app: TestApp) {
  let user: UserRow;
  beforeAll(async () => {
    await app.reset();
    user = await makeUser(app.dataSource);
  });
  return (forwardedFor: string) => login(app.url, user.username, DEFAULT_PASSWORD, forwardedFor);
}

export function trustProxyUnset({ app }: UsedTestApp): void {
  const userLogin = useUserLogin(app);

  it('a client cannot escape the throttle by claiming another address', async () => {
    await failTenTimes(app.url, '198.51.100.1');
    // Another claimed address, the right password: still this socket's address, still blocked.
    const res = await userLogin('198.51.100.2');
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ success: false, data: null, message: 'Too many requests, try again later' });
  });
}

export function trustProxyAddress({ app }: UsedTestApp): void {
  const userLogin = useUserLogin(app);

  it('ten failures from one client lock that client out, not everyone behind the proxy', async () => {
    await failTenTimes(app.url, '203.0.113.5');
    expect((await userLogin('203.0.113.5')).status).toBe(429);
    expect((await userLogin('203.0.113.9')).status).toBe(200);
    // A client-supplied hop before the proxy's own entry is not trusted beyond the proxy's word.
    expect((await userLogin('203.0.113.9, 203.0.113.5')).status).toBe(429);
  });
}

export function trustProxyHops({ app }: UsedTestApp): void {
  const userLogin = useUserLogin(app);

  it('takes the address the nearest proxy saw', async () => {
    await failTenTimes(app.url, '192.0.2.1, 203.0.113.77');
    expect((await userLogin('203.0.113.77')).status).toBe(429);
    // What the client wrote before the proxy's entry does not matter.
    expect((await userLogin('203.0.113.77, 203.0.113.78')).status).toBe(200);
  });
}
