// Every operation of the served OpenAPI document × every kind of caller: bad credentials (docs/api.md §2),
// callers with each module role, admins, and non-members acting on a module they do not belong to.
// The tests are in test/e2e/authorization-matrix/: the personas, how a request is built, what the parts share
// (context.ts), and the parts.
import { useMatrix } from './e2e/authorization-matrix/context.js';
import { everyOperationTests } from './e2e/authorization-matrix/matrix.js';
import { objectLevelTests } from './e2e/authorization-matrix/object-level.js';
import { CONSOLE_CLIENT_ID } from './support/idp.js';
import { useTestIdpAndApp } from './support/oidc-settings.js';

describe('authorization matrix (docs/api.md §2, §4, §5, §9, §10, §11)', () => {
  const { idp, ...service } = useTestIdpAndApp({ clientId: CONSOLE_CLIENT_ID, scopes: ['openid'] });
  const ctx = useMatrix(service, idp);
  everyOperationTests(ctx);
  objectLevelTests(ctx);
});
