// Single sign-on with a real OpenID provider (docs/sso.md): tokens, bindings and links, what is refused, the
// console; the IdP down, its key endpoint failing; the external id claim, ADMIN_OIDC_SUBJECT, PASSWORD_LOGIN=false.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/sso/, one file a part. The describes share the worker's database and run in order.
import { adminSubject } from './e2e/sso/admin-subject.js';
import { bindingTests } from './e2e/sso/binding.js';
import { claimAndRefusalTests } from './e2e/sso/claims-and-refusals.js';
import { consoleAndConfigTests } from './e2e/sso/console-and-config.js';
import { useSsoService } from './e2e/sso/context.js';
import { externalIdClaim } from './e2e/sso/external-id-claim.js';
import { idpDownAtStart } from './e2e/sso/idp-down-at-start.js';
import { issuedTokenTests } from './e2e/sso/issued-tokens.js';
import { keyEndpointFailures } from './e2e/sso/key-endpoint-failures.js';
import { linkingTests } from './e2e/sso/linking.js';
import { passwordLoginOff } from './e2e/sso/password-login-off.js';

describe('single sign-on with a real OpenID provider (docs/sso.md)', () => {
  const ctx = useSsoService();
  issuedTokenTests(ctx);
  bindingTests(ctx);
  linkingTests(ctx);
  claimAndRefusalTests(ctx);
  consoleAndConfigTests(ctx);
});

describe('single sign-on: the IdP down at start, then up, then rotating its key', idpDownAtStart);

describe("single sign-on while the IdP's key endpoint fails", keyEndpointFailures);

describe('OIDC_EXTERNAL_ID_CLAIM: the provisioned external_id names the user first', externalIdClaim);

describe('ADMIN_OIDC_SUBJECT: the bootstrap admin bound at start', adminSubject);

describe('PASSWORD_LOGIN=false', passwordLoginOff);
