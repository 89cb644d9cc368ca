// What the parts of test/files.e2e-spec.ts's avatar tests share: an administrator and a user made afresh before
// each test, and helpers that upload, read and check avatars.
import { AvatarService } from '../../../src/users/avatar.service.js';
import { type UsedTestApp } from '../../support/app.js';
import { makeUser, type UserRow } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { filesUnder, uploadFile } from '../../support/users-helpers.js';

export const TWO_MIB = 2 * 1024 * 1024;

/**
 * The area's service with an administrator's token and a user made afresh before each test (in `given`), and the
 * helpers its parts share.
 */
export function useAvatarUser({ app, api }: UsedTestApp) {
  const given = {} as { token: string; user: UserRow };
  beforeEach(async () => {
    // Tables are emptied between tests; the files of earlier tests go too.
    ({ token: given.token } = await freshAdmin(app, { clearStorage: true }));
    given.user = await makeUser(app.dataSource);
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
  const readAvatar = async (id: number, headers: Record<string, string> = {}, as = given.token) => {
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
    const res = await uploadFile(app.url, given.user.id, bytes, given.token);
    expect(res.status).toBe(200);
    return storedAvatar(given.user.id);
  }

  /** The previous avatar is untouched: same key and type in the database, same bytes, no other file. */
  async function expectUnchanged(previous: { avatar_key: string }, bytes: Buffer) {
    expect((await storedAvatar(given.user.id)).avatar_key).toBe(previous.avatar_key);
    expect(await storageFiles()).toEqual([previous.avatar_key]);
    const res = await readAvatar(given.user.id);
    expect(res.body.equals(bytes)).toBe(true);
  }

  return {
    app,
    api,
    given,
    storedAvatar,
    storageFiles,
    readAvatar,
    recordUploadOutcomes,
    givenAvatar,
    expectUnchanged,
  };
}

export type AvatarContext = ReturnType<typeof useAvatarUser>;
