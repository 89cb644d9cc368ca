import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AvatarFiles } from '../src/users/avatar-files.js';
import { AvatarService } from '../src/users/avatar.service.js';
import { useTestApp } from './support/app.js';
import { freshAdmin } from './support/fresh-admin.js';
import { makeUser, tokenFor, type UserRow } from './support/factories.js';
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
