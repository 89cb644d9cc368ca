import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { type S3Settings } from '../../src/config/app-config.js';

export interface TestS3 {
  settings: S3Settings;
  close(): Promise<void>;
}

/**
 * An S3-compatible server (s3rver, from npm) on a loopback port with one empty bucket, its objects in a
 * temporary directory. s3rver accepts the key pair S3RVER/S3RVER; the SDK's default chain reads it from the
 * environment, as it would read real credentials in production.
 */
export async function startTestS3(bucket = 'mas-test'): Promise<TestS3> {
  const directory = await mkdtemp(path.join(tmpdir(), 'mas-s3-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  process.env.AWS_ACCESS_KEY_ID ??= 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'S3RVER';
  return {
    settings: { bucket, endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
