import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveJwtSecret } from './jwt-secret.js';
import { readOrCreateSecret, StoredSecretError } from './secret-file.js';

describe('secrets kept in the data directory', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mas-secret-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('refuses an empty stored JWT secret instead of signing with an empty key', async () => {
    await writeFile(path.join(dir, 'jwt-secret'), '');
    await expect(resolveJwtSecret(undefined, dir)).rejects.toThrow(StoredSecretError);
    await expect(resolveJwtSecret(undefined, dir)).rejects.toThrow(
      /jwt-secret holds a secret of 0 characters; at least 32 are required.*Set JWT_SECRET/,
    );
    // The file is left for the operator to look at; nothing was generated over it.
    expect(await readFile(path.join(dir, 'jwt-secret'), 'utf8')).toBe('');
  });

  it('refuses a stored JWT secret cut short', async () => {
    await writeFile(path.join(dir, 'jwt-secret'), 'a'.repeat(31) + '\n');
    await expect(resolveJwtSecret(undefined, dir)).rejects.toThrow(/31 characters/);
  });

  it('uses a configured secret without touching the directory', async () => {
    await writeFile(path.join(dir, 'jwt-secret'), '');
    expect(await resolveJwtSecret('c'.repeat(40), dir)).toBe('c'.repeat(40));
  });

  it('makes a secret once, whole, private, and every concurrent starter gets the same one', async () => {
    const secrets = await Promise.all(Array.from({ length: 12 }, () => resolveJwtSecret(undefined, dir)));
    expect(new Set(secrets).size).toBe(1);
    expect(secrets[0].length).toBeGreaterThanOrEqual(32);
    const file = path.join(dir, 'jwt-secret');
    expect((await readFile(file, 'utf8')).trim()).toBe(secrets[0]);
    expect((await stat(file)).mode & 0o077).toBe(0);
    // No temporary file is left behind.
    expect(await readdir(dir)).toEqual(['jwt-secret']);
    // Read back, not made anew, on the next start.
    expect(await resolveJwtSecret(undefined, path.join(dir))).toBe(secrets[0]);
  });

  it('creates the directory when needed', async () => {
    const file = path.join(dir, 'nested', 'deeper', 'secret');
    const made = await readOrCreateSecret(file, { minLength: 4, generate: () => 'abcdef', remedy: '' });
    expect(made).toBe('abcdef');
    expect(await readFile(file, 'utf8')).toBe('abcdef\n');
  });
});
