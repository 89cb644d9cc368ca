// Files: users' avatars, and where files are stored (a folder or an S3 bucket).
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/files/, one file a part.
import { avatarReadTests } from './e2e/files/avatar-read.js';
import { avatarUploadTests } from './e2e/files/avatar-upload.js';
import { useAvatarUser } from './e2e/files/context.js';
import { bucketSharedByTwoServices, localTemporaryFiles, s3Timeouts } from './e2e/files/settings.js';
import { storageTests } from './e2e/files/storage.js';
import { useTestApp } from './support/app.js';

describe('Users API: avatars', () => {
  // The start-up sweep is background work (the last test runs it).
  const ctx = useAvatarUser(useTestApp({ backgroundWorkers: true }));
  avatarUploadTests(ctx);
  avatarReadTests(ctx);
});

describe.each(['local directory', 'S3 bucket'])('Storage in a %s', storageTests);

describe('Storage settings', bucketSharedByTwoServices);

describe('Local temporary files', localTemporaryFiles);

describe('S3 timeouts', s3Timeouts);
