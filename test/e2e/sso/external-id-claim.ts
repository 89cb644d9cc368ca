// Part of test/sso.e2e-spec.ts: OIDC_EXTERNAL_ID_CLAIM.
import { makeUser, tokenFor } from '../../support/factories.js';
import { useTestIdpAndApp } from '../../support/oidc-settings.js';
import { eventually } from '../../support/users-helpers.js';
import { bindingOf, bindUser, expectNoAccount, INVALID, NO_ACCOUNT } from './context.js';

export function externalIdClaim(): void {
  const { idp, app, api } = useTestIdpAndApp({ externalIdClaim: 'oid', createUsers: true });
  beforeEach(() => app.reset());

  it('reaches the user whose external_id equals the claim, before the binding and the username, binding nothing', async () => {
    const jane = await makeUser(app.dataSource, { username: 'jane.doe@uni.edu' });
    const other = await makeUser(app.dataSource, { username: 'someone.else' });
    await app.dataSource.query(`UPDATE users SET external_id = $2 WHERE id = $1`, [jane.id, 'oid-of-jane']);
    // Bound to another person's sub and named by another username: the external id still wins.
    await app.dataSource.query(
      `UPDATE users SET sso_issuer = $2, sso_subject = 'sub-of-other' WHERE id = $1`,
      [other.id, idp.issuer],
    );
    const token = await idp.accessToken({
      preferred_username: 'someone.else',
      sub: 'sub-of-other',
      oid: 'oid-of-jane',
    });
    expect((await api.get('/api/auth/me', { token })).body.data).toMatchObject({
      id: jane.id,
      external_id: 'oid-of-jane',
    });
    expect(await bindingOf(app, jane.id)).toMatchObject({ sso_subject: null });
  });

  it('falls back to the binding and the username when no user holds the claim; the claim is compared exactly', async () => {
    const jane = await makeUser(app.dataSource, { username: 'jane' });
    await app.dataSource.query(`UPDATE users SET external_id = $2 WHERE id = $1`, [jane.id, 'OID-OF-JANE']);
    const token = await idp.accessToken({
      preferred_username: 'jane',
      sub: 'sub-of-jane',
      oid: 'oid-of-jane',
    });
    expect((await api.get('/api/auth/me', { token })).body.data.id).toBe(jane.id);
    expect(await bindingOf(app, jane.id)).toMatchObject({ sso_subject: 'sub-of-jane' });
  });

  it("never reaches an admin through the claim unless the admin is bound to the token's (iss, sub)", async () => {
    const admin = await makeUser(app.dataSource, { username: 'chief', admin: true });
    await app.dataSource.query(`UPDATE users SET external_id = 'oid-of-chief' WHERE id = $1`, [admin.id]);
    const stranger = await idp.accessToken({
      preferred_username: 'mallory',
      sub: 'sub-of-mallory',
      email: 'mallory@example.edu',
      oid: 'oid-of-chief',
    });
    await expectNoAccount(api, stranger);
    expect(await bindingOf(app, admin.id)).toMatchObject({ sso_subject: null });
    expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM users`)).toEqual([{ n: 1 }]);

    await bindUser(app, admin.id, idp.issuer, 'sub-of-chief');
    const own = await idp.accessToken({
      preferred_username: 'chief',
      sub: 'sub-of-chief',
      oid: 'oid-of-chief',
    });
    expect((await api.get('/api/users', { token: own })).status).toBe(200);
    const again = await idp.accessToken({
      preferred_username: 'chief',
      sub: 'sub-of-mallory',
      oid: 'oid-of-chief',
    });
    await expectNoAccount(api, again);
  });

  it('stops reaching a user matched by the claim once the user is made an admin (within the user cache bound)', async () => {
    const admin = await makeUser(app.dataSource, { admin: true });
    const fred = await makeUser(app.dataSource, { username: 'fred' });
    await app.dataSource.query(`UPDATE users SET external_id = 'oid-of-fred' WHERE id = $1`, [fred.id]);
    const token = await idp.accessToken({
      preferred_username: 'fred',
      sub: 'sub-of-fred',
      oid: 'oid-of-fred',
    });
    expect((await api.get('/api/auth/me', { token })).body.data.id).toBe(fred.id);
    const promoted = await api.put(`/api/users/${fred.id}`, {
      token: tokenFor(admin),
      body: { admin: true },
    });
    expect(promoted.status).toBe(200);
    // The token was remembered with the user it named; the admin it now names was never bound to it.
    await eventually(async () => (await api.get('/api/auth/me', { token })).status === 403, 6000);
    expect(await api.get('/api/users', { token })).toMatchObject({ status: 403, body: NO_ACCOUNT });
  });

  it('refuses an inactive provisioned user found by the claim, and never creates another', async () => {
    const jane = await makeUser(app.dataSource, { username: 'jane' });
    await app.dataSource.query(`UPDATE users SET external_id = 'oid-1', active = false WHERE id = $1`, [
      jane.id,
    ]);
    const token = await idp.accessToken({
      preferred_username: 'jane.new',
      sub: 'sub-new',
      email: 'jane.new@example.edu',
      oid: 'oid-1',
    });
    expect(await api.get('/api/auth/me', { token })).toMatchObject({ status: 401, body: INVALID });
    expect(await app.dataSource.query(`SELECT count(*)::int AS n FROM users`)).toEqual([{ n: 1 }]);
  });
}
