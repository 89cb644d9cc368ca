// What the parts of test/sso.e2e-spec.ts share: the IdP and the service of the first part's tests, the answers to a
// refused token and to an unknown person, and a binding written straight into the database.
import { type TestApp } from '../../support/app.js';
import { type Client } from '../../support/http.js';
import { CONSOLE_CLIENT_ID } from '../../support/idp.js';
import { useTestIdpAndApp } from '../../support/oidc-settings.js';

export const INVALID = { success: false, data: null, message: 'Invalid or expired token' };
export const NO_ACCOUNT = { success: false, data: null, message: 'No account for this identity' };

/** The token reaches no account: `GET /api/auth/me` answers 403 `No account for this identity`. */
export async function expectNoAccount(api: Client, token: string): Promise<void> {
  expect(await api.get('/api/auth/me', { token })).toMatchObject({ status: 403, body: NO_ACCOUNT });
}

/** Binds the user to `(issuer, subject)` directly in the database, as if linked earlier. */
export async function bindUser(app: TestApp, id: number, issuer: string, subject: string): Promise<void> {
  await app.dataSource.query(`UPDATE users SET sso_issuer = $2, sso_subject = $3 WHERE id = $1`, [
    id,
    issuer,
    subject,
  ]);
}

/** The user's binding as stored (both null when unbound). */
export async function bindingOf(
  app: TestApp,
  id: number,
): Promise<{ sso_issuer: string | null; sso_subject: string | null }> {
  const [row] = await app.dataSource.query(`SELECT sso_issuer, sso_subject FROM users WHERE id = $1`, [id]);
  return row;
}

/**
 * A test IdP and a service that trusts it, creates users on first sight and offers the console's sign-in (its
 * client id); every table is emptied before each test.
 */
export function useSsoService() {
  const { idp, app, api } = useTestIdpAndApp({ createUsers: true, clientId: CONSOLE_CLIENT_ID });
  beforeEach(() => app.reset());
  return { idp, app, api };
}

export type SsoContext = ReturnType<typeof useSsoService>;
