// Membership lifecycle (docs/api.md §15): status, dates, effective status, rights, routes and CSV of role rows,
// and the time-based events on two replicas.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/modules-lifecycle/, one file a part.
import { useLifecycleModule } from './e2e/modules-lifecycle/context.js';
import { effectiveStatusTests } from './e2e/modules-lifecycle/effective-status.js';
import { membersPatchTests } from './e2e/modules-lifecycle/patch.js';
import { membershipPostTests } from './e2e/modules-lifecycle/post.js';
import { timeEventsOnTwoReplicas } from './e2e/modules-lifecycle/replicas.js';
import { rightsTests } from './e2e/modules-lifecycle/rights.js';
import { rosterImportTests } from './e2e/modules-lifecycle/roster-import.js';
import { useTestApp } from './support/app.js';

describe('membership lifecycle', () => {
  // The time sweep is tested on two replicas below ("time-based membership events on two replicas"); here it stays out of the way.
  const ctx = useLifecycleModule(useTestApp({ membershipSweepIntervalMs: 50_000 }));
  effectiveStatusTests(ctx);
  rightsTests(ctx);
  membershipPostTests(ctx);
  membersPatchTests(ctx);
  rosterImportTests(ctx);
});

describe('time-based membership events on two replicas', timeEventsOnTwoReplicas);
