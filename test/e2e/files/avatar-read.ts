// Part of test/files.e2e-spec.ts: GET /api/users/{user_id}/avatar, and the avatar files when a user goes or the service starts.
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { StartUpSweeps } from '../../../src/workers/start-up-sweeps.js';
import { makeUser, tokenFor } from '../../support/factories.js';
import { image } from '../../support/users-helpers.js';
import { type AvatarContext } from './context.js';

export function avatarReadTests(ctx: AvatarContext): void {
  const { app, api, storageFiles, readAvatar, givenAvatar, given } = ctx;

  describe('GET /api/users/{user_id}/avatar', () => {
    it('is open to any authenticated user, not only admins', async () => {
      const bytes = image('png');
      await givenAvatar(bytes);
      const member = await makeUser(app.dataSource);
      const res = await readAvatar(given.user.id, {}, tokenFor(member));
      expect(res.status).toBe(200);
      expect(res.body.equals(bytes)).toBe(true);
    });

    it('answers 401 without a token', async () => {
      await givenAvatar(image('png'));
      const res = await api.get(`/api/users/${given.user.id}/avatar`);
      expect(res.status).toBe(401);
      expect(res.body.message).toBe('Authentication required');
    });

    it('answers 304 without a body to a matching If-None-Match', async () => {
      await givenAvatar(image('png', 1000));
      const etag = (await readAvatar(given.user.id)).headers.get('etag')!;
      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const res = await readAvatar(given.user.id, { 'if-none-match': header });
        expect(res.status).toBe(304);
        expect(res.headers.get('etag')).toBe(etag);
        expect(res.headers.get('cache-control')).toBe('private, no-cache');
        expect(res.body.length).toBe(0);
      }
    });

    it('answers 200 to an If-None-Match that does not match, and after a new upload', async () => {
      await givenAvatar(image('png'));
      const etag = (await readAvatar(given.user.id)).headers.get('etag')!;
      expect((await readAvatar(given.user.id, { 'if-none-match': '"stale"' })).status).toBe(200);
      await givenAvatar(image('gif'));
      const res = await readAvatar(given.user.id, { 'if-none-match': etag });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/gif');
    });

    it('answers 404 Avatar not found for a user without one', async () => {
      const res = await api.get(`/api/users/${given.user.id}/avatar`, { token: given.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, data: null, message: 'Avatar not found' });
    });

    it('answers 404 User not found for an unknown user and 400 for an invalid id', async () => {
      const missing = await api.get('/api/users/999999999/avatar', { token: given.token });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ success: false, data: null, message: 'User not found' });
      const invalid = await api.get('/api/users/0/avatar', { token: given.token });
      expect(invalid.status).toBe(400);
      expect(invalid.body.message).toBe('user_id must be a positive integer');
    });
  });

  it('removes the avatar file when the user is deleted', async () => {
    await givenAvatar(image('png'));
    expect(await storageFiles()).toHaveLength(1);
    expect((await api.delete(`/api/users/${given.user.id}`, { token: given.token })).status).toBe(200);
    expect(await storageFiles()).toEqual([]);
    expect((await api.get(`/api/users/${given.user.id}/avatar`, { token: given.token })).body.message).toBe(
      'User not found',
    );
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
    await app.service.app.get(StartUpSweeps).sweepAvatars();

    expect(await storageFiles()).toEqual([current, recent].sort());
    expect((await readAvatar(given.user.id)).status).toBe(200);
  });
}
