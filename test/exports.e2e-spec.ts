// The LMS roster exports (docs/api.md §16), read the way the platforms read them: the zip by yauzl, each CSV by
// csv-parse with no relaxation. The tests are in test/e2e/exports/, one file a part; test/e2e/exports/context.ts
// makes the year they export and the service's settings (a year starting on 1 September, a Canvas sub-account).
import { exportAccess } from './e2e/exports/access.js';
import { canvasFiles } from './e2e/exports/canvas.js';
import { SETTINGS, useRosterYear } from './e2e/exports/context.js';
import { oneRosterFiles } from './e2e/exports/oneroster.js';
import { exportPreview } from './e2e/exports/preview.js';
import { exportRequests } from './e2e/exports/requests.js';
import { useTestApp } from './support/app.js';

describe('LMS roster exports (docs/api.md §16)', () => {
  const ctx = useRosterYear(useTestApp(SETTINGS));
  oneRosterFiles(ctx);
  canvasFiles(ctx);
  exportRequests(ctx);
  exportPreview(ctx);
  exportAccess(ctx);
});
