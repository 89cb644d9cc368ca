// Files: users' avatars, and where files are stored (a folder or an S3 bucket).
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { jest } from '@jest/globals';
import { type AppConfig } from '../src/config/app-config.js';
import { ModuleFiles } from '../src/course-modules/modules/module-files.js';
import { LocalFileStore } from '../src/storage/local-file-store.js';
import { S3FileStore } from '../src/storage/s3-file-store.js';
import { StorageService } from '../src/storage/storage.service.js';
import { AvatarFiles } from '../src/users/avatar-files.js';
import { AvatarService } from '../src/users/avatar.service.js';
import { startTestApp, type TestApp, useTestApp } from './support/app.js';
import { makeModule, makeUser, tokenFor, type UserRow } from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';
import { addAssignmentWithFile } from './support/modules-fixtures.js';
import { startTestS3, type TestS3 } from './support/s3.js';
import { abortedUpload, eventually, filesUnder, image, upload, uploadFile } from './support/users-helpers.js';
import { waitFor } from './support/wait-for.js';

const TWO_MIB = 2 * 1024 * 1024;

describe('Users API: avatars', () => {
  // The start-up sweep is background work (the last test runs it).
  const { app, api } = useTestApp({ backgroundWorkers: true });
  let token: string;
  let user: UserRow;

  beforeEach(async () => {
    // Tables are emptied between tests; the files of earlier tests go too.
    ({ token } = await freshAdmin(app, { clearStorage: true }));
    user = await makeUser(app.dataSource);
  });

  const storedAvatar = async (id: number) =>
    (
      await app.dataSource.query(
        `SELECT avatar_key, avatar_content_type, updated_at FROM users WHERE id = $1`,
        [id],
      )
    )[0];
  const storageFiles = () => filesUnder(app.config.storageDir);
  /** GET of the avatar, its body read to the end (an unread body would keep the connection busy). */
  const readAvatar = async (id: number, headers: Record<string, string> = {}, as = token) => {
    const res = await fetch(`${app.url}/api/users/${id}/avatar`, {
      headers: { authorization: `Bearer ${as}`, ...headers },
    });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  };

  /** How each avatar upload ends from now on ('uploaded' or the error's message), until `restore()`. */
  function recordUploadOutcomes(): { outcomes: string[]; restore(): void } {
    const avatars = app.service.app.get(AvatarService);
    const upload = avatars.upload.bind(avatars);
    const outcomes: string[] = [];
    avatars.upload = (...args) =>
      upload(...args).then(
        (summary) => (outcomes.push('uploaded'), summary),
        (error: Error) => {
          outcomes.push(error.message);
          throw error;
        },
      );
    return { outcomes, restore: () => (avatars.upload = upload) };
  }

  /** Uploads `bytes` as the user's avatar and checks it took. */
  async function givenAvatar(bytes: Buffer) {
    const res = await uploadFile(app.url, user.id, bytes, token);
    expect(res.status).toBe(200);
    return storedAvatar(user.id);
  }

  /** The previous avatar is untouched: same key and type in the database, same bytes, no other file. */
  async function expectUnchanged(previous: { avatar_key: string }, bytes: Buffer) {
    expect((await storedAvatar(user.id)).avatar_key).toBe(previous.avatar_key);
    expect(await storageFiles()).toEqual([previous.avatar_key]);
    const res = await readAvatar(user.id);
    expect(res.body.equals(bytes)).toBe(true);
  }

  describe('PUT /api/users/{user_id}/avatar', () => {
    it.each([
      ['png', 'image/png'],
      ['jpeg', 'image/jpeg'],
      ['gif', 'image/gif'],
      ['webp', 'image/webp'],
    ] as const)('accepts a %s and serves it back with its content type', async (kind, type) => {
      const bytes = image(kind, 300);
      const res = await uploadFile(app.url, user.id, bytes, token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'Avatar uploaded successfully',
        data: {
          id: Number(user.id),
          username: user.username,
          email: user.email,
          given_name: null,
          family_name: null,
          display_name: null,
          active: true,
          admin: false,
          created_at: user.created_at.toISOString(),
          updated_at: expect.any(String),
          avatar_url: `/api/users/${user.id}/avatar`,
          external_id: null,
        },
      });
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(user.updated_at.getTime());

      const served = await readAvatar(user.id);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe(type);
      expect(served.headers.get('cache-control')).toBe('private, no-cache');
      expect(served.headers.get('etag')).toMatch(/^"[^"]+"$/);
      expect(served.body.equals(bytes)).toBe(true);
    });

    it('trusts the bytes, not the type the client declares', async () => {
      const res = await upload(
        app.url,
        user.id,
        [{ name: 'file', filename: 'photo.png', type: 'image/png', data: image('gif') }],
        token,
      );
      expect(res.status).toBe(200);
      expect((await readAvatar(user.id)).headers.get('content-type')).toBe('image/gif');
    });

    it('shows avatar_url on the user everywhere once set', async () => {
      await givenAvatar(image('png'));
      const url = `/api/users/${user.id}/avatar`;
      expect((await api.get(`/api/users/${user.id}`, { token })).body.data.avatar_url).toBe(url);
      const listed = (await api.get('/api/users', { token })).body.data.users;
      expect(listed.find((entry: any) => entry.id === Number(user.id)).avatar_url).toBe(url);
      expect((await api.get('/api/auth/me', { token: tokenFor(user) })).body.data.avatar_url).toBe(url);
    });

    it('replaces the previous avatar and removes its file', async () => {
      const first = await givenAvatar(image('png'));
      const firstEtag = (await readAvatar(user.id)).headers.get('etag');
      const second = await givenAvatar(image('jpeg', 500));
      expect(second.avatar_key).not.toBe(first.avatar_key);
      expect(second.avatar_content_type).toBe('image/jpeg');
      expect(await storageFiles()).toEqual([second.avatar_key]);
      const served = await readAvatar(user.id);
      expect(served.headers.get('etag')).not.toBe(firstEtag);
      expect(served.body.equals(image('jpeg', 500))).toBe(true);
    });

    it('stores the file under the storage directory, complete', async () => {
      const bytes = image('webp', 4096);
      const { avatar_key } = await givenAvatar(bytes);
      expect(avatar_key).toMatch(new RegExp(`^avatars/${user.id}/[A-Za-z0-9-]+$`));
      expect((await readFile(path.join(app.config.storageDir, avatar_key))).equals(bytes)).toBe(true);
    });

    it('accepts a file of exactly 2 MiB', async () => {
      const bytes = image('png', TWO_MIB);
      const res = await uploadFile(app.url, user.id, bytes, token);
      expect(res.status).toBe(200);
      const served = await readAvatar(user.id);
      expect(served.headers.get('content-length')).toBe(String(TWO_MIB));
      expect(served.body.equals(bytes)).toBe(true);
    });

    it('answers 413 for 2 MiB + 1 byte, keeping the previous avatar and no partial file', async () => {
      const previousBytes = image('gif');
      const previous = await givenAvatar(previousBytes);
      const res = await uploadFile(app.url, user.id, image('png', TWO_MIB + 1), token);
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ success: false, data: null, message: 'File too large' });
      await expectUnchanged(previous, previousBytes);
    });

    it('answers 413 for a much larger file without storing any of it', async () => {
      const res = await uploadFile(app.url, user.id, image('jpeg', 12 * 1024 * 1024), token);
      expect(res.status).toBe(413);
      expect(res.body.message).toBe('File too large');
      expect(await storageFiles()).toEqual([]);
      expect((await storedAvatar(user.id)).avatar_key).toBeNull();
    });

    it.each([
      ['text', Buffer.from('just some text, not an image')],
      ['a PDF claiming to be a PNG', Buffer.from('%PDF-1.7\n%âãÏÓ\n1 0 obj')],
      ['an SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>')],
      ['an empty file', Buffer.alloc(0)],
      ['a truncated PNG signature', image('png', 5)],
    ])('answers 415 for %s, keeping the previous avatar', async (_case, bytes) => {
      const previousBytes = image('png');
      const previous = await givenAvatar(previousBytes);
      const res = await uploadFile(app.url, user.id, bytes, token);
      expect(res.status).toBe(415);
      expect(res.body).toEqual({ success: false, data: null, message: 'Unsupported file type' });
      await expectUnchanged(previous, previousBytes);
    });

    it('answers 415 for a non-image over 2 MiB (the type is known first)', async () => {
      const res = await uploadFile(app.url, user.id, Buffer.alloc(TWO_MIB + 10, 0x41), token);
      expect(res.status).toBe(415);
      expect(res.body.message).toBe('Unsupported file type');
    });

    it('answers 400 when there is no file part', async () => {
      const res = await upload(app.url, user.id, [{ name: 'caption', data: 'hello' }], token);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message: 'No file uploaded' });
    });

    it('answers 400 when the only file part has another name', async () => {
      const res = await upload(
        app.url,
        user.id,
        [{ name: 'avatar', filename: 'a.png', data: image('png') }],
        token,
      );
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('No file uploaded');
      expect(await storageFiles()).toEqual([]);
    });

    it('answers 400 for an empty multipart body', async () => {
      const res = await fetch(`${app.url}/api/users/${user.id}/avatar`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data; boundary=x' },
        body: '',
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).message).toBe('No file uploaded');
    });

    it.each([
      ['two file parts', 2],
      ['three file parts', 3],
    ])('answers 400 for %s, storing nothing', async (_case, count) => {
      const previousBytes = image('png');
      const previous = await givenAvatar(previousBytes);
      const parts = Array.from({ length: count }, (_, i) => ({
        name: i === 0 ? 'file' : `file${i}`,
        filename: `${i}.png`,
        data: image('png', 100 + i),
      }));
      const res = await upload(app.url, user.id, parts, token);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message: 'Only one file may be uploaded' });
      await expectUnchanged(previous, previousBytes);
    });

    it('answers 400 for two parts both named file', async () => {
      const res = await upload(
        app.url,
        user.id,
        [
          { name: 'file', filename: 'a.png', data: image('png') },
          { name: 'file', filename: 'b.png', data: image('png') },
        ],
        token,
      );
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('Only one file may be uploaded');
      expect(await storageFiles()).toEqual([]);
      expect((await storedAvatar(user.id)).avatar_key).toBeNull();
    });

    it('ignores other multipart fields', async () => {
      const res = await upload(
        app.url,
        user.id,
        [
          { name: 'caption', data: 'me at the beach' },
          { name: 'file', filename: 'a.jpg', data: image('jpeg') },
          { name: 'note', data: 'x'.repeat(100_000) },
        ],
        token,
      );
      expect(res.status).toBe(200);
    });

    it('answers 400 for a multipart body that breaks off', async () => {
      const boundary = 'cut-short';
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nabc`;
      const res = await fetch(`${app.url}/api/users/${user.id}/avatar`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
        },
        body,
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).message).toBe('Malformed multipart body');
      expect(await storageFiles()).toEqual([]);
    });

    it('leaves the previous avatar and no partial file when the client aborts mid-upload', async () => {
      const previousBytes = image('webp', 1000);
      const previous = await givenAvatar(previousBytes);
      const before = await storedAvatar(user.id);
      const { outcomes, restore } = recordUploadOutcomes();
      let partial: string[] = [];
      try {
        await abortedUpload(app.url, Number(user.id), token, image('png', TWO_MIB), 1024 * 1024, async () => {
          partial = await waitFor(
            async () => {
              const temporary = (await storageFiles()).filter((file) => file.startsWith('.tmp/'));
              return temporary.length > 0 && temporary;
            },
            { timeoutMs: 5000, what: 'the upload to start its temporary file' },
          );
        });
        // Half the file had reached a temporary file when the client went away.
        expect(partial).toHaveLength(1);
        // The server notices the closed socket, fails the write and removes its temporary file.
        await eventually(async () => (await storageFiles()).length === 1);
        await waitFor(() => outcomes.length > 0, { timeoutMs: 5000, what: 'the aborted upload to end' });
      } finally {
        restore();
      }
      await expectUnchanged(previous, previousBytes);
      expect((await storedAvatar(user.id)).updated_at).toEqual(before.updated_at);
      // The service still answers normally afterwards.
      expect((await uploadFile(app.url, user.id, image('png'), token)).status).toBe(200);
    });

    it('gives up on an upload whose client left before its body was read, changing nothing', async () => {
      const previousBytes = image('png');
      const previous = await givenAvatar(previousBytes);
      // Record how each upload ends: one left waiting on a closed request would never settle.
      const { outcomes, restore } = recordUploadOutcomes();
      const server = app.service.app.getHttpServer();
      const connections = () =>
        new Promise<number>((resolve, reject) =>
          server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
        );
      // Hold the user lookup with a table lock (the admin's access is cached by the upload above).
      const runner = app.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      try {
        await runner.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
        const before = await connections();
        await abortedUpload(app.url, Number(user.id), token, image('png', 4096), 1024, () =>
          waitFor(
            async () =>
              (
                await app.dataSource.query<unknown[]>(
                  `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
                )
              ).length > 0,
            { timeoutMs: 5000, what: "the upload's user lookup to wait on the lock" },
          ),
        );
        // The client has left before the lookup returns: its connection is gone on the server's side too.
        await waitFor(async () => (await connections()) <= before, {
          timeoutMs: 5000,
          what: "the server to close the aborted upload's connection",
        });
      } finally {
        await runner.commitTransaction();
        await runner.release();
      }
      try {
        await waitFor(() => outcomes.length > 0, { timeoutMs: 5000, what: 'the aborted upload to end' });
      } finally {
        restore();
      }
      expect(outcomes).toEqual(['Malformed multipart body']);
      await expectUnchanged(previous, previousBytes);
    });

    describe('check order', () => {
      it('answers 415 to a body that is not multipart, before authentication', async () => {
        const cases: [Record<string, string>, string | undefined][] = [
          [{ 'content-type': 'application/json' }, '{"file": "x"}'],
          [{ 'content-type': 'text/plain' }, 'hello'],
          [{ 'content-type': 'multipart/mixed; boundary=x' }, '--x--'],
          [{}, undefined],
        ];
        for (const [headers, body] of cases) {
          const auths: Record<string, string>[] = [{}, { authorization: `Bearer ${token}` }];
          for (const auth of auths) {
            const res = await fetch(`${app.url}/api/users/${user.id}/avatar`, {
              method: 'PUT',
              headers: { ...headers, ...auth },
              body,
            });
            expect(res.status).toBe(415);
            expect(await res.json()).toEqual({
              success: false,
              data: null,
              message: 'Unsupported content type',
            });
          }
        }
      });

      it('answers 401 without a token and 403 for a non-admin, storing nothing', async () => {
        const anonymous = await uploadFile(app.url, user.id, image('png'));
        expect(anonymous.status).toBe(401);
        expect(anonymous.body.message).toBe('Authentication required');
        const self = await uploadFile(app.url, user.id, image('png'), tokenFor(user));
        expect(self.status).toBe(403);
        expect(self.body.message).toBe('You do not have permission to perform this action');
        expect(await storageFiles()).toEqual([]);
      });

      it('answers 400 for an invalid id before looking at the file', async () => {
        const res = await uploadFile(app.url, 'abc', Buffer.from('not an image'), token);
        expect(res.status).toBe(400);
        expect(res.body.message).toBe('user_id must be a positive integer');
      });

      it('answers 404 for an unknown user before any check of the file', async () => {
        for (const bytes of [image('png'), Buffer.from('text'), Buffer.alloc(0), image('png', TWO_MIB + 1)]) {
          const res = await uploadFile(app.url, 999999999, bytes, token);
          expect(res.status).toBe(404);
          expect(res.body).toEqual({ success: false, data: null, message: 'User not found' });
        }
        const none = await upload(app.url, 999999999, [{ name: 'caption', data: 'x' }], token);
        expect(none.status).toBe(404);
        expect(await storageFiles()).toEqual([]);
      });
    });
  });

  describe('GET /api/users/{user_id}/avatar', () => {
    it('is open to any authenticated user, not only admins', async () => {
      const bytes = image('png');
      await givenAvatar(bytes);
      const member = await makeUser(app.dataSource);
      const res = await readAvatar(user.id, {}, tokenFor(member));
      expect(res.status).toBe(200);
      expect(res.body.equals(bytes)).toBe(true);
    });

    it('answers 401 without a token', async () => {
      await givenAvatar(image('png'));
      const res = await api.get(`/api/users/${user.id}/avatar`);
      expect(res.status).toBe(401);
      expect(res.body.message).toBe('Authentication required');
    });

    it('answers 304 without a body to a matching If-None-Match', async () => {
      await givenAvatar(image('png', 1000));
      const etag = (await readAvatar(user.id)).headers.get('etag')!;
      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const res = await readAvatar(user.id, { 'if-none-match': header });
        expect(res.status).toBe(304);
        expect(res.headers.get('etag')).toBe(etag);
        expect(res.headers.get('cache-control')).toBe('private, no-cache');
        expect(res.body.length).toBe(0);
      }
    });

    it('answers 200 to an If-None-Match that does not match, and after a new upload', async () => {
      await givenAvatar(image('png'));
      const etag = (await readAvatar(user.id)).headers.get('etag')!;
      expect((await readAvatar(user.id, { 'if-none-match': '"stale"' })).status).toBe(200);
      await givenAvatar(image('gif'));
      const res = await readAvatar(user.id, { 'if-none-match': etag });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/gif');
    });

    it('answers 404 Avatar not found for a user without one', async () => {
      const res = await api.get(`/api/users/${user.id}/avatar`, { token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, data: null, message: 'Avatar not found' });
    });

    it('answers 404 User not found for an unknown user and 400 for an invalid id', async () => {
      const missing = await api.get('/api/users/999999999/avatar', { token });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ success: false, data: null, message: 'User not found' });
      const invalid = await api.get('/api/users/0/avatar', { token });
      expect(invalid.status).toBe(400);
      expect(invalid.body.message).toBe('user_id must be a positive integer');
    });
  });

  it('removes the avatar file when the user is deleted', async () => {
    await givenAvatar(image('png'));
    expect(await storageFiles()).toHaveLength(1);
    expect((await api.delete(`/api/users/${user.id}`, { token })).status).toBe(200);
    expect(await storageFiles()).toEqual([]);
    expect((await api.get(`/api/users/${user.id}/avatar`, { token })).body.message).toBe('User not found');
  });

  it('sweeps stray avatar files at start: old leftovers and deleted users go, current and recent files stay', async () => {
    const { avatar_key: current } = await givenAvatar(image('png'));
    const file = (key: string) => path.join(app.config.storageDir, key);
    const folder = path.dirname(current);
    const stale = `${folder}/left-by-a-crash`;
    const recent = `${folder}/upload-in-flight`;
    const deletedUser = `avatars/999999999/old-avatar`;
    for (const key of [stale, recent, deletedUser]) {
      await mkdir(path.dirname(file(key)), { recursive: true });
      await writeFile(file(key), image('gif'));
    }
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await utimes(file(stale), twoHoursAgo, twoHoursAgo);

    // What the service runs once it has started (a second instance in this process would share its pool).
    await app.service.app.get(AvatarFiles).onApplicationBootstrap();

    expect(await storageFiles()).toEqual([current, recent].sort());
    expect((await readAvatar(user.id)).status).toBe(200);
  });
});

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

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

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
describe.each(['local directory', 'S3 bucket'])('Storage in a %s', (kind) => {
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
});

describe('Storage settings', () => {
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
});

describe('Local temporary files', () => {
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
});

describe('S3 timeouts', () => {
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
});
