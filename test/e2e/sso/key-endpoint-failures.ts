// Part of test/sso.e2e-spec.ts: the IdP's key endpoint failing.
import { makeUser } from '../../support/factories.js';
import { makeSigningKey } from '../../support/idp.js';
import { useTestIdpAndApp } from '../../support/oidc-settings.js';
import { eventually } from '../../support/users-helpers.js';

export function keyEndpointFailures(): void {
  const { idp, app, api } = useTestIdpAndApp({ refetchCooldownMs: 1000, keysMaxAgeMs: 1500 });

  beforeAll(async () => {
    await makeUser(app.dataSource, { username: 'steady' });
    // The keys are fetched once the IdP is discovered.
    await eventually(
      async () =>
        (await api.get('/api/auth/me', { token: await idp.mint({ preferred_username: 'steady' }) }))
          .status === 200,
      5000,
    );
  });
  afterEach(() => {
    idp.jwksFailure = 'none';
  });

  it('refetches at most once per cooldown for unknown kids, counted from the last attempt, not the last success', async () => {
    idp.jwksFailure = 'error';
    const stranger = await makeSigningKey('not-published-yet');
    const unknownKid = () => idp.mint({ preferred_username: 'steady' }, { key: stranger });
    const before = idp.jwksRequests;
    // Once the cooldown since the last fetch has passed, an unknown kid makes one (failing) refetch.
    await eventually(async () => {
      expect((await api.get('/api/auth/me', { token: await unknownKid() })).status).toBe(401);
      return idp.jwksRequests > before;
    }, 5000);
    const after = idp.jwksRequests;
    for (let i = 0; i < 5; i++) {
      expect((await api.get('/api/auth/me', { token: await unknownKid() })).status).toBe(401);
    }
    expect(idp.jwksRequests).toBe(after);
    // The last good keys stay in use.
    expect(
      (await api.get('/api/auth/me', { token: await idp.mint({ preferred_username: 'steady' }) })).status,
    ).toBe(200);
  });

  it('refreshes stale keys in the background, one fetch at a time: no request waits on a hanging endpoint', async () => {
    idp.jwksFailure = 'hang';
    const before = idp.jwksRequests;
    const known = async () => {
      const started = Date.now();
      const res = await api.get('/api/auth/me', { token: await idp.mint({ preferred_username: 'steady' }) });
      return { status: res.status, ms: Date.now() - started };
    };
    // Requests go on while the keys grow stale; one of them starts the refresh, which then hangs.
    await eventually(async () => {
      const answer = await known();
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(1000);
      return idp.jwksRequests > before;
    }, 10_000);
    for (let i = 0; i < 5; i++) {
      const answer = await known();
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(1000);
    }
    expect(idp.jwksRequests).toBe(before + 1);
  });
}
