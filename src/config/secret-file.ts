import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** A stored secret that is too short to use (an empty or cut-off file): the start stops with this. */
export class StoredSecretError extends Error {
  constructor(file: string, length: number, minLength: number, remedy: string) {
    super(
      `${file} holds a secret of ${length} characters; at least ${minLength} are required, so it is not used. ${remedy}`,
    );
    this.name = 'StoredSecretError';
  }
}

export interface SecretFileOptions {
  /** Shortest stored value accepted; anything shorter stops the start. */
  minLength: number;
  /** Makes a new secret when the file does not exist yet. */
  generate: () => string;
  /** What the operator can do about a short file, appended to the error message. */
  remedy: string;
}

/** The trimmed secret stored in `file`, undefined when there is none; a short one is an error, never used. */
async function readStored(file: string, options: SecretFileOptions): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const secret = text.trim();
  if (secret.length < options.minLength) {
    throw new StoredSecretError(file, secret.length, options.minLength, options.remedy);
  }
  return secret;
}

/**
 * The secret kept in `file` (mode 0600), made on first use. The new value is written whole and synced under a
 * temporary name, then linked into place: nobody ever reads a half-written file, and when several processes
 * start at once exactly one link wins and every process uses the winner's secret. A file that exists but holds
 * fewer than `minLength` characters (a crash or a full disk in an older version's write) stops the start.
 */
export async function readOrCreateSecret(file: string, options: SecretFileOptions): Promise<string> {
  const stored = await readStored(file, options);
  if (stored !== undefined) return stored;
  await mkdir(path.dirname(file), { recursive: true });
  const secret = options.generate();
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(secret + '\n');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temporary, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // EEXIST: another process linked its secret first; use that one.
    if (code === 'EEXIST') return (await readStored(file, options)) as string;
    // A file system without hard links: rename is still atomic, and the file read back is the one in place.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    await rename(temporary, file);
    return (await readStored(file, options)) as string;
  } finally {
    await rm(temporary, { force: true });
  }
  return secret;
}
