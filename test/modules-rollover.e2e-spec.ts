// The yearly rollover (POST /api/modules/rollover): what it creates and copies, how it runs, what it refuses, and
// thousands of modules at once. The tests are in test/e2e/modules-rollover/, one file a part;
// test/e2e/modules-rollover/context.ts holds what they share.
import { useRollover } from './e2e/modules-rollover/context.js';
import { rolloverCopies } from './e2e/modules-rollover/copies.js';
import { rolloverRefusals } from './e2e/modules-rollover/refusals.js';
import { rolloverRuns } from './e2e/modules-rollover/runs.js';
import { rolloverAtScale } from './e2e/modules-rollover/scale.js';
import { useTestApp } from './support/app.js';

describe('POST /api/modules/rollover', () => {
  const ctx = useRollover(useTestApp());
  rolloverCopies(ctx);
  rolloverRuns(ctx);
  rolloverRefusals(ctx);
  rolloverAtScale(ctx);
});
