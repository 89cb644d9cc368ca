// SCIM 2.0: the routes, and Okta's and Entra ID's calls replayed as they send them.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/scim/, one file a part.
import { useScimRoutes } from './e2e/scim/context.js';
import { documentAndGroupsTests } from './e2e/scim/document-and-groups.js';
import { entraReplay } from './e2e/scim/entra.js';
import { framingAndDiscoveryTests } from './e2e/scim/framing-and-discovery.js';
import { oktaReplay } from './e2e/scim/okta.js';
import { scimSwitchedOff } from './e2e/scim/switched-off.js';
import { userChangeTests } from './e2e/scim/users-change.js';
import { userCreateAndReadTests } from './e2e/scim/users-create-and-read.js';
import { useTestApp } from './support/app.js';
import { useTestIdpAndApp } from './support/oidc-settings.js';

describe('SCIM 2.0 (/api/scim/v2, docs/api.md §14)', () => {
  const ctx = useScimRoutes(useTestApp({ scimEnabled: true, publicBaseUrl: 'https://modules.uni.edu' }));
  framingAndDiscoveryTests(ctx);
  describe('Users', () => {
    userCreateAndReadTests(ctx);
    userChangeTests(ctx);
  });
  documentAndGroupsTests(ctx);
});

describe('SCIM switched off (SCIM_ENABLED unset)', () => scimSwitchedOff(useTestApp()));

describe('Okta provisioning, replayed (docs/provisioning.md)', () =>
  oktaReplay(useTestApp({ scimEnabled: true })));

describe('Microsoft Entra ID provisioning, replayed (docs/provisioning.md)', () => {
  const { idp, ...service } = useTestIdpAndApp({ createUsers: true }, { scimEnabled: true });
  entraReplay(service, idp);
});
