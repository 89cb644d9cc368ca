// Part of test/files.e2e-spec.ts: a bucket shared by two services, local temporary files, and S3 timeouts.
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buffer as readAll } from 'node:stream/consumers';
import { LocalFileStore } from '../../../src/storage/local-file-store.js';
import { S3FileStore } from '../../../src/storage/s3-file-store.js';
import { StorageService } from '../../../src/storage/storage.service.js';
import { startTestApp } from '../../support/app.js';
import { startTestS3 } from '../../support/s3.js';

export function bucketSharedByTwoServices(): void {
  it('a second service on the same bucket sees the files the first wrote', async () => {
    const s3 = await startTestS3('mas-shared');
    const dirs = await Promise.all([1, 2].map(() => mkdtemp(path.join(tmpdir(), 'mas-s3-local-'))));
    const [one, two] = await Promise.all(
      dirs.map((storageDir) => startTestApp({ s3: s3.settings, storageDir })),
    );
    try {
      await one.service.app.get(StorageService).write('modules/77/shared', Buffer.from('across replicas'));
      const other = two.service.app.get(StorageService);
      expect((await readAll(other.open('modules/77/shared'))).toString()).toBe('across replicas');
    } finally {
      await one.close();
      await two.close();
      await s3.close();
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });
}

export function localTemporaryFiles(): void {
  it('removes at start only temporary files old enough not to be uploads in flight', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'mas-tmp-'));
    try {
      const tmp = path.join(root, '.tmp');
      await mkdir(tmp, { recursive: true });
      await writeFile(path.join(tmp, 'in-flight'), 'x');
      await writeFile(path.join(tmp, 'left-by-a-crash'), 'x');
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
      await utimes(path.join(tmp, 'left-by-a-crash'), twoHoursAgo, twoHoursAgo);
      // Another replica's upload, sharing the volume, is still writing its temporary file.
      await new LocalFileStore(root).clearTemporary();
      expect(await readdir(tmp)).toEqual(['in-flight']);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
}

export function s3Timeouts(): void {
  it('fails a request to a store that accepts connections but never answers, within its bounds', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const store = new S3FileStore(
      {
        bucket: 'mas-silent',
        endpoint: `http://127.0.0.1:${port}`,
        region: 'us-east-1',
        forcePathStyle: true,
      },
      { connectionMs: 200, requestMs: 500 },
    );
    try {
      const started = Date.now();
      await expect(store.stat('avatars/1/x')).rejects.toThrow();
      // Three attempts of 0.5 s with the SDK's back-off between them.
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await store.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
}
