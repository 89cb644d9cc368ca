import { hash, verify, type Options } from '@node-rs/argon2';

/**
 * argon2id with OWASP's minimum profile (19 MiB, 2 passes, one lane), the profile every stored hash so far
 * was made with. `@node-rs/argon2` ships prebuilt binaries per platform (no install script, no compiler) and
 * hashes on libuv's thread pool. `Algorithm` is an ambient const enum, which isolated modules cannot read:
 * 2 is its `Argon2id`.
 */
export const ARGON2ID: Readonly<Options> = Object.freeze({
  algorithm: 2,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
});

/** A PHC string: `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2ID);
}

/** Verifies against any argon2 PHC string; the parameters are read from the string itself. */
export function verifyPassword(phc: string, password: string): Promise<boolean> {
  return verify(phc, password);
}
