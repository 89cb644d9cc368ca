import { PassThrough, type Readable } from 'node:stream';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { type S3Settings } from '../config/app-config.js';
import { type FileStore, type StoredFile, type StoredFileInfo } from './file-store.js';

/** S3 deletes at most this many keys per request. */
const DELETE_BATCH = 1000;

/** Bounds on one S3 request (the SDK retries a failed one twice more, with back-off). */
export interface S3Timeouts {
  /** Opening the connection (TCP and TLS). */
  connectionMs: number;
  /** The request and its whole response: an avatar or a module file, a few MiB at most. */
  requestMs: number;
}

/**
 * Without them, a store that accepts connections but never answers would hold a request (and the start-up
 * sweep) forever: the SDK sets no timeout by default.
 */
export const S3_TIMEOUTS: S3Timeouts = { connectionMs: 5000, requestMs: 30_000 };

function isNotFound(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    (error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404)
  );
}

/**
 * Files as objects in an S3-compatible bucket (AWS S3, MinIO, Ceph RGW, R2…), shared by every replica. A PUT
 * is atomic on S3 (an object appears whole or not at all), so no temporary object is needed; folders are key
 * prefixes. Credentials come from the AWS SDK's default chain (environment, shared profile, web identity).
 */
export class S3FileStore implements FileStore {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(settings: S3Settings, timeouts: S3Timeouts = S3_TIMEOUTS) {
    this.bucket = settings.bucket;
    this.client = new S3Client({
      requestHandler: {
        connectionTimeout: timeouts.connectionMs,
        requestTimeout: timeouts.requestMs,
        throwOnRequestTimeout: true,
      },
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      // Checksums only where S3 requires them: many S3-compatible servers reject the newer trailing ones.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async write(key: string, source: Readable | Buffer): Promise<void> {
    if (Buffer.isBuffer(source)) {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: source }));
      return;
    }
    // A stream of unknown length: one PUT when it fits in a part, a multipart upload (aborted on failure)
    // otherwise. Either way the object becomes visible only once complete.
    await new Upload({ client: this.client, params: { Bucket: this.bucket, Key: key, Body: source } }).done();
  }

  async remove(key: string): Promise<void> {
    const keys = [key];
    for await (const page of this.pages(`${key}/`)) {
      keys.push(...(page.Contents ?? []).map((object) => object.Key!));
    }
    for (let start = 0; start < keys.length; start += DELETE_BATCH) {
      const batch = keys.slice(start, start + DELETE_BATCH);
      const result = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
      const failed = (result.Errors ?? []).filter((error) => error.Code !== 'NoSuchKey');
      if (failed.length > 0) {
        throw new Error(`Could not delete ${failed[0].Key}: ${failed[0].Code} ${failed[0].Message}`);
      }
    }
  }

  async list(folder: string): Promise<string[]> {
    const prefix = `${folder}/`;
    const names: string[] = [];
    for await (const page of this.pages(prefix, '/')) {
      for (const common of page.CommonPrefixes ?? []) names.push(common.Prefix!.slice(prefix.length, -1));
      for (const object of page.Contents ?? []) names.push(object.Key!.slice(prefix.length));
    }
    return names;
  }

  async listFiles(folder: string): Promise<StoredFile[]> {
    const files: StoredFile[] = [];
    for await (const page of this.pages(`${folder}/`)) {
      for (const object of page.Contents ?? []) {
        files.push({ key: object.Key!, modifiedAt: object.LastModified?.getTime() ?? 0 });
      }
    }
    return files;
  }

  async stat(key: string): Promise<StoredFileInfo | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: head.ContentLength ?? 0, modifiedAt: head.LastModified?.getTime() ?? 0 };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  open(key: string): Readable {
    // The caller wants a stream at once (to hand to the HTTP reply); the request starts behind it.
    const output = new PassThrough();
    this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key })).then(
      (object) => {
        const body = object.Body as Readable;
        body.on('error', (error) => output.destroy(error));
        output.on('close', () => body.destroy());
        body.pipe(output);
      },
      (error: unknown) => output.destroy(error as Error),
    );
    return output;
  }

  /** Nothing to clear: an interrupted PUT leaves no object (a lifecycle rule aborts stale multipart uploads). */
  async clearTemporary(): Promise<void> {}

  close(): Promise<void> {
    this.client.destroy();
    return Promise.resolve();
  }

  private async *pages(prefix: string, delimiter?: string) {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          Delimiter: delimiter,
          ContinuationToken: token,
        }),
      );
      yield page;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}
