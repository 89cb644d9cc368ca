// Part of test/sso.e2e-spec.ts: ADMIN_OIDC_SUBJECT.
import { AdminBootstrap } from '../../../src/auth/admin-bootstrap.js';
import { makeUser } from '../../support/factories.js';
import { useTestIdpAndApp } from '../../support/oidc-settings.js';
import { bindingOf, bindUser } from './context.js';

export function adminSubject(): void {
  const { idp, app, api } = useTestIdpAndApp(
    { adminSubject: 'subject-of-the-first-admin' },
    { passwordLogin: false },
  );
  beforeEach(() => app.reset());
  // The spec's next describe (PASSWORD_LOGIN=false, test/e2e/sso/password-login-off.ts) expects an empty audit trail.
  afterEach(() => app.reset());

  const bootstrap = () => app.service.app.get(AdminBootstrap).onApplicationBootstrap();

  it('creates the first admin bound to (OIDC_ISSUER, ADMIN_OIDC_SUBJECT), reachable with password login off', async () => {
    await bootstrap();
    const token = await idp.accessToken({
      preferred_username: 'the.head',
      sub: 'subject-of-the-first-admin',
    });
    const me = await api.get('/api/auth/me', { token });
    expect(me.body.data).toMatchObject({ username: 'admin', admin: true });
    expect((await api.get('/api/users', { token })).status).toBe(200);
    expect(await app.dataSource.query(`SELECT action, actor_id, summary FROM audit_events`)).toEqual([
      {
        action: 'user.update',
        actor_id: null,
        summary: {
          sso_binding: { from: null, to: { issuer: idp.issuer, subject: 'subject-of-the-first-admin' } },
        },
      },
    ]);
  });

  it('binds an existing unbound bootstrap admin, and leaves a bound one as it is', async () => {
    const admin = await makeUser(app.dataSource, { username: 'admin', admin: true });
    await bootstrap();
    expect(await bindingOf(app, admin.id)).toEqual({
      sso_issuer: idp.issuer,
      sso_subject: 'subject-of-the-first-admin',
    });
    await bindUser(app, admin.id, idp.issuer, 'subject-linked-later');
    await bootstrap();
    expect(await bindingOf(app, admin.id)).toMatchObject({ sso_subject: 'subject-linked-later' });
  });
}
