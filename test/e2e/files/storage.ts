// Part of test/files.e2e-spec.ts: the file store's interface and the service on it, for a local directory and an S3
// bucket alike.
import { Readable } from 'node:stream';
import { buffer as readAll } from 'node:stream/consumers';
import { jest } from '@jest/globals';
import { type AppConfig } from '../../../src/config/app-config.js';
import { ModuleFiles } from '../../../src/course-modules/modules/module-files.js';
import { StorageService } from '../../../src/storage/storage.service.js';
import { AvatarFiles } from '../../../src/users/avatar-files.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { makeModule, makeUser, tokenFor, type UserRow } from '../../support/factories.js';
import { addAssignmentWithFile } from '../../support/modules-fixtures.js';
import { startTestS3, type TestS3 } from '../../support/s3.js';
import { image, uploadFile } from '../../support/users-helpers.js';

/** Every file key in the store, found through the interface only (so it means the same for both kinds). */
async function allKeys(storage: StorageService, folder: string): Promise<string[]> {
  const keys: string[] = [];
  for (const name of await storage.list(folder)) {
    const key = `${folder}/${name}`;
    if (await storage.stat(key)) keys.push(key);
    else keys.push(...(await allKeys(storage, key)));
  }
  return keys.sort();
}

const everything = async (storage: StorageService) => [
  ...(await allKeys(storage, 'avatars')),
  ...(await allKeys(storage, 'modules')),
];

/** A stream that sends some bytes, then fails (a client gone mid-upload). */
function failingStream(sent: Buffer): Readable {
  return new Readable({
    read() {
      this.push(sent);
      this.destroy(new Error('client went away'));
    },
  });
}

/**
 * The same tests for both implementations: the interface itself, then the service end to end (avatars,
 * module files, the start-up sweeps) with that implementation underneath.
 */
export function storageTests(kind: string): void {
  let s3: TestS3 | undefined;
  let app: TestApp;
  let storage: StorageService;
  let admin: UserRow;
  let token: string;

  beforeAll(async () => {
    const overrides: Partial<AppConfig> = {};
    if (kind === 'S3 bucket') {
      s3 = await startTestS3();
      overrides.s3 = s3.settings;
    }
    app = await startTestApp(overrides);
    storage = app.service.app.get(StorageService);
  });
  afterAll(async () => {
    await app?.close();
    await s3?.close();
  });
  beforeEach(async () => {
    await app.reset();
    await storage.remove('avatars');
    await storage.remove('modules');
    admin = await makeUser(app.dataSource, { admin: true });
    token = tokenFor(admin);
  });

  it('uses the implementation the settings choose', () => {
    expect(storage.store.constructor.name).toBe(kind === 'S3 bucket' ? 'S3FileStore' : 'LocalFileStore');
  });

  describe('the interface', () => {
    it('stores a buffer and a stream, and gives back their bytes and sizes', async () => {
      const streamed = Buffer.alloc(300_000, 7);
      await storage.write('modules/5/a', Buffer.from('hello'));
      await storage.write(
        'modules/5/b',
        Readable.from([streamed.subarray(0, 1000), streamed.subarray(1000)]),
      );
      expect((await storage.stat('modules/5/a'))?.size).toBe(5);
      expect((await storage.stat('modules/5/b'))?.size).toBe(streamed.length);
      expect((await readAll(storage.open('modules/5/a'))).toString()).toBe('hello');
      expect((await readAll(storage.open('modules/5/b'))).equals(streamed)).toBe(true);
      expect((await storage.list('modules/5')).sort()).toEqual(['a', 'b']);
      expect(await storage.list('modules')).toEqual(['5']);
    });

    it('answers for missing keys without failing, except when asked for their bytes', async () => {
      expect(await storage.stat('modules/9/none')).toBeNull();
      expect(await storage.list('modules/9')).toEqual([]);
      await expect(storage.remove('modules/9')).resolves.toBeUndefined();
      await expect(readAll(storage.open('modules/9/none'))).rejects.toThrow();
    });

    it('keeps the previous file whole when a replacing write fails part way', async () => {
      await storage.write('avatars/3/current', Buffer.from('previous bytes'));
      await expect(storage.write('avatars/3/current', failingStream(Buffer.alloc(1000, 1)))).rejects.toThrow(
        'client went away',
      );
      await expect(storage.write('avatars/3/other', failingStream(Buffer.alloc(1000, 1)))).rejects.toThrow();
      expect((await readAll(storage.open('avatars/3/current'))).toString()).toBe('previous bytes');
      expect(await everything(storage)).toEqual(['avatars/3/current']);
    });

    it('removes a folder and everything under it, and nothing whose name only starts the same', async () => {
      await storage.write('modules/1/x', Buffer.from('1'));
      await storage.write('modules/1/sub/y', Buffer.from('2'));
      await storage.write('modules/12/z', Buffer.from('3'));
      await storage.write('modules/1x', Buffer.from('4'));
      await storage.remove('modules/1');
      expect(await everything(storage)).toEqual(['modules/12/z', 'modules/1x']);
    });

    it('lists only per-record folders for the sweeps, in batches', async () => {
      for (const name of ['1', '22', '0123', 'notes', '9223372036854775808', '333'])
        await storage.write(`modules/${name}/f`, Buffer.from('x'));
      const batches: string[][] = [];
      for await (const batch of storage.idFolderBatches('modules', 2)) batches.push(batch);
      expect(batches.every((batch) => batch.length <= 2)).toBe(true);
      expect(batches.flat().sort()).toEqual(['1', '22', '333']);
    });

    it('refuses keys that could leave the storage root', async () => {
      for (const key of ['../etc/passwd', 'avatars/../../x', '/abs', 'a//b', ''])
        await expect(storage.write(key, Buffer.from('x'))).rejects.toThrow('Invalid storage key');
    });
  });

  describe('the service on it', () => {
    let user: UserRow;
    beforeEach(async () => {
      user = await makeUser(app.dataSource);
    });
    const avatarKey = async () =>
      (await app.dataSource.query(`SELECT avatar_key FROM users WHERE id = $1`, [user.id]))[0]
        .avatar_key as string;
    const readAvatar = async () => {
      const res = await fetch(`${app.url}/api/users/${user.id}/avatar`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return {
        status: res.status,
        etag: res.headers.get('etag'),
        body: Buffer.from(await res.arrayBuffer()),
      };
    };

    it('serves an uploaded avatar, replaces it atomically and removes the previous file', async () => {
      const first = image('png', 5000);
      expect((await uploadFile(app.url, user.id, first, token)).status).toBe(200);
      const firstKey = await avatarKey();
      expect(await everything(storage)).toEqual([firstKey]);
      let read = await readAvatar();
      expect(read.status).toBe(200);
      expect(read.body.equals(first)).toBe(true);

      const second = image('jpeg', 8000);
      expect((await uploadFile(app.url, user.id, second, token)).status).toBe(200);
      const secondKey = await avatarKey();
      expect(secondKey).not.toBe(firstKey);
      expect(await everything(storage)).toEqual([secondKey]);
      read = await readAvatar();
      expect(read.body.equals(second)).toBe(true);
      expect(read.etag).toBe(`"${secondKey.split('/').at(-1)}"`);

      // A refused upload leaves the current avatar and nothing else.
      expect((await uploadFile(app.url, user.id, Buffer.from('not an image at all'), token)).status).toBe(
        415,
      );
      expect(await everything(storage)).toEqual([secondKey]);
      expect((await readAvatar()).body.equals(second)).toBe(true);
    });

    it('answers 404 Avatar not found when the stored file has gone', async () => {
      expect((await uploadFile(app.url, user.id, image('png', 100), token)).status).toBe(200);
      await storage.remove(await avatarKey());
      const res = await fetch(`${app.url}/api/users/${user.id}/avatar`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { message: string }).message).toBe('Avatar not found');
    });

    it("removes a deleted user's avatar folder after the delete commits", async () => {
      expect((await uploadFile(app.url, user.id, image('png', 100), token)).status).toBe(200);
      const res = await fetch(`${app.url}/api/users/${user.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      expect(await everything(storage)).toEqual([]);
    });

    it("removes a deleted module's files after the delete commits", async () => {
      const deleted = await makeModule(app.dataSource);
      const kept = await makeModule(app.dataSource);
      await addAssignmentWithFile(app, Number(deleted.id));
      const keptKey = await addAssignmentWithFile(app, Number(kept.id));
      const res = await fetch(`${app.url}/api/modules/${deleted.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      expect(await everything(storage)).toEqual([keptKey]);
    });

    it('sweeps the folders of records deleted while no service ran, and keeps the rest', async () => {
      const module = await makeModule(app.dataSource);
      const moduleKey = await addAssignmentWithFile(app, Number(module.id));
      expect((await uploadFile(app.url, user.id, image('png', 100), token)).status).toBe(200);
      const avatar = await avatarKey();
      await storage.write('modules/999999999/left-over', Buffer.from('x'));
      await storage.write('avatars/999999999/left-over', Buffer.from('x'));
      // A stray file of an existing user younger than the grace period may be an upload in flight: kept.
      await storage.write(`avatars/${user.id}/in-flight`, Buffer.from('x'));

      expect(await app.service.app.get(ModuleFiles).sweep()).toEqual(['999999999']);
      expect(await app.service.app.get(AvatarFiles).sweep()).toEqual(['avatars/999999999']);
      expect(await everything(storage)).toEqual([avatar, `avatars/${user.id}/in-flight`, moduleKey].sort());

      // Past the grace period the stray file goes too; the current avatar stays.
      const later = Date.now() + 2 * 60 * 60 * 1000;
      expect(await app.service.app.get(AvatarFiles).sweep(later)).toEqual([`avatars/${user.id}/in-flight`]);
      expect(await everything(storage)).toEqual([avatar, moduleKey].sort());
    });

    it('sweeps avatars with one listing of the store, not one per user', async () => {
      const users = await Promise.all(Array.from({ length: 5 }, () => makeUser(app.dataSource)));
      for (const other of users) await storage.write(`avatars/${other.id}/stray`, Buffer.from('x'));
      // Spies that call through: how often the sweep asks the store for what.
      const spies = (['list', 'listFiles', 'stat'] as const).map(
        (method) => [method, jest.spyOn(storage.store, method)] as const,
      );
      try {
        const later = Date.now() + 2 * 60 * 60 * 1000;
        expect((await app.service.app.get(AvatarFiles).sweep(later)).sort()).toEqual(
          users.map((other) => `avatars/${other.id}/stray`).sort(),
        );
        expect(spies.map(([method, spy]) => [method, spy.mock.calls.length])).toEqual([
          ['list', 0],
          ['listFiles', 1],
          ['stat', 0],
        ]);
      } finally {
        for (const [, spy] of spies) spy.mockRestore();
      }
    });
  });
}
