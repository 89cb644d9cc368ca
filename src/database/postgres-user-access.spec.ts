import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkPostgresUserAccess, firstBlockedDirectory, StartupError } from './postgres-user-access.js';

describe('what the postgres user can reach', () => {
  let root: string;
  // An account that owns nothing here and is in none of its groups: "others" bits decide.
  const stranger = { uid: 54_321, gids: [54_321] };

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'pg-access-'));
    await mkdir(path.join(root, 'app', 'bin'), { recursive: true });
    await chmod(root, 0o755);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('finds the first directory without search permission on the way', async () => {
    expect(await firstBlockedDirectory(path.join(root, 'app', 'bin', 'initdb'), stranger)).toBeUndefined();
    await chmod(path.join(root, 'app'), 0o700);
    expect(await firstBlockedDirectory(path.join(root, 'app', 'bin', 'initdb'), stranger)).toBe(
      path.join(root, 'app'),
    );
  });

  it('uses the owner and group bits for the owner and group members', async () => {
    await chmod(path.join(root, 'app'), 0o710);
    const { uid, gid } = await stat(path.join(root, 'app'));
    const target = path.join(root, 'app', 'bin', 'initdb');
    expect(await firstBlockedDirectory(target, { uid: 54_321, gids: [gid] })).toBeUndefined();
    expect(await firstBlockedDirectory(target, { uid, gids: [] })).toBeUndefined();
    expect(await firstBlockedDirectory(target, stranger)).toBe(path.join(root, 'app'));
  });

  it('skips directories that do not exist yet', async () => {
    expect(await firstBlockedDirectory(path.join(root, 'new', 'deeper', 'data'), stranger)).toBeUndefined();
  });

  it('names the programs or the data directory, and the ways out', async () => {
    await chmod(path.join(root, 'app'), 0o700);
    const binary = path.join(root, 'app', 'bin', 'initdb');
    await expect(checkPostgresUserAccess(binary, path.join(root, 'data'), stranger)).rejects.toThrow(
      new StartupError(
        `The embedded PostgreSQL cannot start: the service runs as root, so PostgreSQL must run as the ` +
          `"postgres" user, who cannot enter ${path.join(root, 'app')} to reach its programs in ` +
          `${path.join(root, 'app', 'bin')}; run the service as an ordinary user, install it under a directory ` +
          `other users can enter, or set DATABASE_URL to an existing PostgreSQL server.`,
      ),
    );
    await chmod(path.join(root, 'app'), 0o755);
    await mkdir(path.join(root, 'private'), { mode: 0o700 });
    await expect(
      checkPostgresUserAccess(binary, path.join(root, 'private', 'data'), stranger),
    ).rejects.toThrow(/cannot enter .*private to reach the data directory .*set DATA_DIR/);
    await expect(checkPostgresUserAccess(binary, path.join(root, 'data'), stranger)).resolves.toBeUndefined();
  });
});
