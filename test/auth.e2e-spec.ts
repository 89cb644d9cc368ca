// Authentication: sign-in, passwords and tokens (docs/api.md §2), integration tokens.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/auth/, one file a part.
import { bearerTokenTests } from './e2e/auth/bearer-tokens.js';
import { useSignInUser } from './e2e/auth/context.js';
import { integrationTokens } from './e2e/auth/integration-tokens.js';
import { loginTests } from './e2e/auth/login.js';
import { passwordTests } from './e2e/auth/password.js';
import { proxyAndFirstAdminTests } from './e2e/auth/proxy-and-first-admin.js';
import { useTestApp } from './support/app.js';

describe('authentication (docs/api.md §2)', () => {
  const ctx = useSignInUser(useTestApp());
  loginTests(ctx);
  bearerTokenTests(ctx);
  passwordTests(ctx);
  proxyAndFirstAdminTests(ctx);
});

describe('Integration tokens (/api/tokens, docs/api.md §14)', () => integrationTokens(useTestApp()));
