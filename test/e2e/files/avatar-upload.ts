// Part of test/files.e2e-spec.ts: PUT /api/users/{user_id}/avatar.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { tokenFor } from '../../support/factories.js';
import { failure } from '../../support/http.js';
import {
  abortedUpload,
  accountJson,
  eventually,
  image,
  upload,
  uploadFile,
} from '../../support/users-helpers.js';
import { waitFor } from '../../support/wait-for.js';
import { type AvatarContext, TWO_MIB } from './context.js';

export function avatarUploadTests(ctx: AvatarContext): void {
  const {
    app,
    api,
    storedAvatar,
    storageFiles,
    readAvatar,
    recordUploadOutcomes,
    givenAvatar,
    expectUnchanged,
    given,
  } = ctx;

  describe('PUT /api/users/{user_id}/avatar', () => {
    it.each([
      ['png', 'image/png'],
      ['jpeg', 'image/jpeg'],
      ['gif', 'image/gif'],
      ['webp', 'image/webp'],
    ] as const)('accepts a %s and serves it back with its content type', async (kind, type) => {
      const bytes = image(kind, 300);
      const res = await uploadFile(app.url, given.user.id, bytes, given.token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'Avatar uploaded successfully',
        data: {
          ...accountJson(given.user),
          updated_at: expect.any(String),
          avatar_url: `/api/users/${given.user.id}/avatar`,
        },
      });
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(given.user.updated_at.getTime());

      const served = await readAvatar(given.user.id);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe(type);
      expect(served.headers.get('cache-control')).toBe('private, no-cache');
      expect(served.headers.get('etag')).toMatch(/^"[^"]+"$/);
      expect(served.body.equals(bytes)).toBe(true);
    });

    it('trusts the bytes, not the type the client declares', async () => {
      const res = await upload(
        app.url,
        given.user.id,
        [{ name: 'file', filename: 'photo.png', type: 'image/png', data: image('gif') }],
        given.token,
      );
      expect(res.status).toBe(200);
      expect((await readAvatar(given.user.id)).headers.get('content-type')).toBe('image/gif');
    });

    it('shows avatar_url on the user everywhere once set', async () => {
      await givenAvatar(image('png'));
      const url = `/api/users/${given.user.id}/avatar`;
      expect(
        (await api.get(`/api/users/${given.user.id}`, { token: given.token })).body.data.avatar_url,
      ).toBe(url);
      const listed = (await api.get('/api/users', { token: given.token })).body.data.users;
      expect(listed.find((entry: any) => entry.id === Number(given.user.id)).avatar_url).toBe(url);
      expect((await api.get('/api/auth/me', { token: tokenFor(given.user) })).body.data.avatar_url).toBe(url);
    });

    it('replaces the previous avatar and removes its file', async () => {
      const first = await givenAvatar(image('png'));
      const firstEtag = (await readAvatar(given.user.id)).headers.get('etag');
      const second = await givenAvatar(image('jpeg', 500));
      expect(second.avatar_key).not.toBe(first.avatar_key);
      expect(second.avatar_content_type).toBe('image/jpeg');
      expect(await storageFiles()).toEqual([second.avatar_key]);
      const served = await readAvatar(given.user.id);
      expect(served.headers.get('etag')).not.toBe(firstEtag);
      expect(served.body.equals(image('jpeg', 500))).toBe(true);
    });

    it('stores the file under the storage directory, complete', async () => {
      const bytes = image('webp', 4096);
      const { avatar_key } = await givenAvatar(bytes);
      expect(avatar_key).toMatch(new RegExp(`^avatars/${given.user.id}/[A-Za-z0-9-]+$`));
      expect((await readFile(path.join(app.config.storageDir, avatar_key))).equals(bytes)).toBe(true);
    });

    it('accepts a file of exactly 2 MiB', async () => {
      const bytes = image('png', TWO_MIB);
      const res = await uploadFile(app.url, given.user.id, bytes, given.token);
      expect(res.status).toBe(200);
      const served = await readAvatar(given.user.id);
      expect(served.headers.get('content-length')).toBe(String(TWO_MIB));
      expect(served.body.equals(bytes)).toBe(true);
    });

    it('answers 413 for 2 MiB + 1 byte, keeping the previous avatar and no partial file', async () => {
      const previousBytes = image('gif');
      const previous = await givenAvatar(previousBytes);
      const res = await uploadFile(app.url, given.user.id, image('png', TWO_MIB + 1), given.token);
      expect(res.status).toBe(413);
      expect(res.body).toEqual(failure('File too large'));
      await expectUnchanged(previous, previousBytes);
    });

    it('answers 413 for a much larger file without storing any of it', async () => {
      const res = await uploadFile(app.url, given.user.id, image('jpeg', 12 * 1024 * 1024), given.token);
      expect(res.status).toBe(413);
      expect(res.body.message).toBe('File too large');
      expect(await storageFiles()).toEqual([]);
      expect((await storedAvatar(given.user.id)).avatar_key).toBeNull();
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
      const res = await uploadFile(app.url, given.user.id, bytes, given.token);
      expect(res.status).toBe(415);
      expect(res.body).toEqual(failure('Unsupported file type'));
      await expectUnchanged(previous, previousBytes);
    });

    it('answers 415 for a non-image over 2 MiB (the type is known first)', async () => {
      const res = await uploadFile(app.url, given.user.id, Buffer.alloc(TWO_MIB + 10, 0x41), given.token);
      expect(res.status).toBe(415);
      expect(res.body.message).toBe('Unsupported file type');
    });

    it('answers 400 when there is no file part', async () => {
      const res = await upload(app.url, given.user.id, [{ name: 'caption', data: 'hello' }], given.token);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failure('No file uploaded'));
    });

    it('answers 400 when the only file part has another name', async () => {
      const res = await upload(
        app.url,
        given.user.id,
        [{ name: 'avatar', filename: 'a.png', data: image('png') }],
        given.token,
      );
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('No file uploaded');
      expect(await storageFiles()).toEqual([]);
    });

    it('answers 400 for an empty multipart body', async () => {
      const res = await fetch(`${app.url}/api/users/${given.user.id}/avatar`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${given.token}`,
          'content-type': 'multipart/form-data; boundary=x',
        },
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
      const res = await upload(app.url, given.user.id, parts, given.token);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failure('Only one file may be uploaded'));
      await expectUnchanged(previous, previousBytes);
    });

    it('answers 400 for two parts both named file', async () => {
      const res = await upload(
        app.url,
        given.user.id,
        [
          { name: 'file', filename: 'a.png', data: image('png') },
          { name: 'file', filename: 'b.png', data: image('png') },
        ],
        given.token,
      );
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('Only one file may be uploaded');
      expect(await storageFiles()).toEqual([]);
      expect((await storedAvatar(given.user.id)).avatar_key).toBeNull();
    });

    it('ignores other multipart fields', async () => {
      const res = await upload(
        app.url,
        given.user.id,
        [
          { name: 'caption', data: 'me at the beach' },
          { name: 'file', filename: 'a.jpg', data: image('jpeg') },
          { name: 'note', data: 'x'.repeat(100_000) },
        ],
        given.token,
      );
      expect(res.status).toBe(200);
    });

    it('answers 400 for a multipart body that breaks off', async () => {
      const boundary = 'cut-short';
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nabc`;
      const res = await fetch(`${app.url}/api/users/${given.user.id}/avatar`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${given.token}`,
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
      const before = await storedAvatar(given.user.id);
      const { outcomes, restore } = recordUploadOutcomes();
      let partial: string[] = [];
      try {
        await abortedUpload(
          app.url,
          Number(given.user.id),
          given.token,
          image('png', TWO_MIB),
          1024 * 1024,
          async () => {
            partial = await waitFor(
              async () => {
                const temporary = (await storageFiles()).filter((file) => file.startsWith('.tmp/'));
                return temporary.length > 0 && temporary;
              },
              { timeoutMs: 5000, what: 'the upload to start its temporary file' },
            );
          },
        );
        // Half the file had reached a temporary file when the client went away.
        expect(partial).toHaveLength(1);
        // The server notices the closed socket, fails the write and removes its temporary file.
        await eventually(async () => (await storageFiles()).length === 1);
        await waitFor(() => outcomes.length > 0, { timeoutMs: 5000, what: 'the aborted upload to end' });
      } finally {
        restore();
      }
      await expectUnchanged(previous, previousBytes);
      expect((await storedAvatar(given.user.id)).updated_at).toEqual(before.updated_at);
      // The service still answers normally afterwards.
      expect((await uploadFile(app.url, given.user.id, image('png'), given.token)).status).toBe(200);
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
        await abortedUpload(app.url, Number(given.user.id), given.token, image('png', 4096), 1024, () =>
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
          const auths: Record<string, string>[] = [{}, { authorization: `Bearer ${given.token}` }];
          for (const auth of auths) {
            const res = await fetch(`${app.url}/api/users/${given.user.id}/avatar`, {
              method: 'PUT',
              headers: { ...headers, ...auth },
              body,
            });
            expect(res.status).toBe(415);
            expect(await res.json()).toEqual(failure('Unsupported content type'));
          }
        }
      });

      it('answers 401 without a token and 403 for a non-admin, storing nothing', async () => {
        const anonymous = await uploadFile(app.url, given.user.id, image('png'));
        expect(anonymous.status).toBe(401);
        expect(anonymous.body.message).toBe('Authentication required');
        const self = await uploadFile(app.url, given.user.id, image('png'), tokenFor(given.user));
        expect(self.status).toBe(403);
        expect(self.body.message).toBe('You do not have permission to perform this action');
        expect(await storageFiles()).toEqual([]);
      });

      it('answers 400 for an invalid id before looking at the file', async () => {
        const res = await uploadFile(app.url, 'abc', Buffer.from('not an image'), given.token);
        expect(res.status).toBe(400);
        expect(res.body.message).toBe('user_id must be a positive integer');
      });

      it('answers 404 for an unknown user before any check of the file', async () => {
        for (const bytes of [image('png'), Buffer.from('text'), Buffer.alloc(0), image('png', TWO_MIB + 1)]) {
          const res = await uploadFile(app.url, 999999999, bytes, given.token);
          expect(res.status).toBe(404);
          expect(res.body).toEqual(failure('User not found'));
        }
        const none = await upload(app.url, 999999999, [{ name: 'caption', data: 'x' }], given.token);
        expect(none.status).toBe(404);
        expect(await storageFiles()).toEqual([]);
      });
    });
  });
}
