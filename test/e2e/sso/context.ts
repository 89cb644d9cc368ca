// What the parts of test/sso.e2e-spec.ts share: the IdP and the service of the first part's tests, the answers to a
// refused token and to an unknown person, and a binding written straight into the database.
import { type AppConfig } from '../../../src/config/app-config.js';
import { type TestApp, useTestApp } from '../../support/app.js';
import { CONSOLE_CLIENT_ID } from '../../support/idp.js';
import { useTestIdp } from '../../support/oidc-settings.js';

export const INVALID = { success: false, data: null, message: 'Invalid or expired token' };
export const NO_ACCOUNT = { success: false, data: null, message: 'No account for this identity' };

/** Binds the user to `(issuer, subject)` directly in the database, as if linked earlier. */
export async function bindUser(app: TestApp, id: number, issuer: string, subject: string): Promise<void> {
  await app.dataSource.query(`UPDATE users SET sso_issuer = $2, sso_subject = $3 WHERE id = $1`, [
    id,
    issuer,
    subject,
  ]);
}

/**
 * A test IdP and a service that trusts it, creates users on first sight and offers the console's sign-in (its
 * client id); every table is emptied before each test.
 */
export function useSsoService() {
  const settings: Partial<AppConfig> = {};
  const idp = useTestIdp(settings, { createUsers: true, clientId: CONSOLE_CLIENT_ID });
  const { app, api } = useTestApp(settings);
  beforeEach(() => app.reset());
  return { idp, app, api };
}

export type SsoContext = ReturnType<typeof useSsoService>;
