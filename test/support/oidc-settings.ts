import { type AppConfig, type OidcSettings } from '../../src/config/app-config.js';
import { type UsedTestApp, useTestApp } from './app.js';
import { TEST_AUDIENCE, TestIdp } from './idp.js';

/**
 * The service's settings for signing in through the test IdP at `issuer` (test/support/idp.ts): its audience,
 * usernames from `preferred_username`, no users created and no console client unless `overrides` say otherwise.
 */
export function oidcSettings(issuer: string, overrides: Partial<OidcSettings> = {}): { oidc: OidcSettings } {
  return {
    oidc: {
      issuer,
      audience: TEST_AUDIENCE,
      usernameClaim: 'preferred_username',
      createUsers: false,
      clientId: undefined,
      scopes: ['openid', 'profile', 'email'],
      maxTokenAgeS: 86_400,
      refetchCooldownMs: 30_000,
      ...overrides,
    },
  };
}

/**
 * Starts the test IdP in `beforeAll` and writes its OIDC settings into `settings`, for a `useTestApp(settings)`
 * called after this in the same `describe` (so the IdP is up when the service starts); stops it in `afterAll`.
 * Gives a handle that may be captured at once: it resolves to the running IdP from the first hook on, as
 * useTestApp()'s handles do.
 */
function useTestIdp(settings: Partial<AppConfig>, overrides: Partial<OidcSettings> = {}): TestIdp {
  let started: TestIdp | undefined;
  beforeAll(async () => {
    started = await TestIdp.start();
    Object.assign(settings, oidcSettings(started.issuer, overrides));
  });
  afterAll(() => started?.stop());
  const current = (): TestIdp => {
    if (!started) throw new Error('the test IdP is used before its beforeAll hook ran');
    return started;
  };
  return new Proxy({} as TestIdp, {
    get(_, key) {
      const idp = current();
      const value: unknown = Reflect.get(idp, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(idp) : value;
    },
    set: (_, key, value) => Reflect.set(current(), key, value),
  });
}

/**
 * The test IdP ({@link useTestIdp}, with `oidc` for its settings) and then a service that trusts it
 * (`useTestApp(settings)`), for a `describe`: the IdP's handle and the service's.
 */
export function useTestIdpAndApp(
  oidc: Partial<OidcSettings>,
  settings: Partial<AppConfig> = {},
): UsedTestApp & { idp: TestIdp } {
  const idp = useTestIdp(settings, oidc);
  return { idp, ...useTestApp(settings) };
}
