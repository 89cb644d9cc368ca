import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

/** A start-up failure whose message says what is wrong and what to do; printed alone, without a stack. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

export interface Account {
  uid: number;
  /** Every group the account is in. */
  gids: number[];
}

/** The `postgres` account, or one that is nobody's (the library creates the user on first start). */
export async function postgresAccount(): Promise<Account> {
  const run = promisify(execFile);
  try {
    const [uid, groups] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-G', 'postgres'])]);
    return { uid: Number(uid.stdout.trim()), gids: groups.stdout.trim().split(/\s+/).map(Number) };
  } catch {
    return { uid: -1, gids: [] };
  }
}

/** Whether `account` holds `bits` (r=4, w=2, x=1) on a file of this mode and owner, as the kernel decides. */
function allowed(mode: number, owner: number, group: number, account: Account, bits: number): boolean {
  if (account.uid === 0) return true;
  if (owner === account.uid) return ((mode >> 6) & bits) === bits;
  if (account.gids.includes(group)) return ((mode >> 3) & bits) === bits;
  return (mode & bits) === bits;
}

/**
 * The first directory on the way to `target` that `account` cannot pass through (no search permission), or
 * `undefined` when every one can be passed. Ancestors that do not exist yet are skipped: they will be made.
 */
export async function firstBlockedDirectory(target: string, account: Account): Promise<string | undefined> {
  const absolute = path.resolve(target);
  const directories: string[] = [];
  for (let dir = path.dirname(absolute); ; dir = path.dirname(dir)) {
    directories.unshift(dir);
    if (dir === path.dirname(dir)) break;
  }
  for (const dir of directories) {
    const info = await stat(dir).catch(() => undefined);
    if (!info) return undefined;
    if (!allowed(info.mode, info.uid, info.gid, account, 1)) return dir;
  }
  return undefined;
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must reach both the server's programs and the data
 * directory; when it cannot, initdb fails with a raw `spawn … EACCES`. This says so up front, in one sentence.
 */
export async function checkPostgresUserAccess(
  binary: string,
  dataDir: string,
  account: Account,
): Promise<void> {
  const blockedBinaries = await firstBlockedDirectory(binary, account);
  if (blockedBinaries !== undefined) {
    throw new StartupError(
      `The embedded PostgreSQL cannot start: the service runs as root, so PostgreSQL must run as the "postgres" ` +
        `user, who cannot enter ${blockedBinaries} to reach its programs in ${path.dirname(binary)}; run the ` +
        `service as an ordinary user, install it under a directory other users can enter, or set DATABASE_URL ` +
        `to an existing PostgreSQL server.`,
    );
  }
  const blockedData = await firstBlockedDirectory(path.join(dataDir, 'postgres'), account);
  if (blockedData !== undefined) {
    throw new StartupError(
      `The embedded PostgreSQL cannot start: the service runs as root, so PostgreSQL must run as the "postgres" ` +
        `user, who cannot enter ${blockedData} to reach the data directory ${dataDir}; run the service as an ` +
        `ordinary user, set DATA_DIR to a directory other users can enter, or set DATABASE_URL to an existing ` +
        `PostgreSQL server.`,
    );
  }
}
