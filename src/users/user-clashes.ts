/** A user to be created, as far as uniqueness goes. */
export interface NewUserIdentity {
  username: string;
  email: string;
}

/** Lower-cased usernames and emails already stored that a batch might clash with. */
export interface StoredIdentities {
  usernames: ReadonlySet<string>;
  emails: ReadonlySet<string>;
}

/**
 * Every username or email of `batch` that clashes, case-insensitively, with a stored user or with another entry
 * of the batch: each value once (its first spelling as sent), in request order, an entry's username before its
 * email. Empty when the batch can be created.
 */
export function listClashes(batch: readonly NewUserIdentity[], stored: StoredIdentities): string[] {
  const keysOf = (entry: NewUserIdentity) =>
    [
      [`u:${entry.username.toLowerCase()}`, entry.username],
      [`e:${entry.email.toLowerCase()}`, entry.email],
    ] as const;
  const counts = new Map<string, number>();
  for (const entry of batch) for (const [key] of keysOf(entry)) counts.set(key, (counts.get(key) ?? 0) + 1);

  const isStored = (key: string) =>
    key.startsWith('u:') ? stored.usernames.has(key.slice(2)) : stored.emails.has(key.slice(2));
  const listed = new Set<string>();
  const clashes: string[] = [];
  for (const entry of batch) {
    for (const [key, sent] of keysOf(entry)) {
      if (listed.has(key) || (counts.get(key)! < 2 && !isStored(key))) continue;
      listed.add(key);
      clashes.push(sent);
    }
  }
  return clashes;
}
