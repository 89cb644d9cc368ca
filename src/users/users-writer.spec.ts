import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// The users writer (docs/architecture.md, "The users writer"): UsersService decides, UsersRepository writes.
const SRC = path.resolve('src');
const REPOSITORY = 'users/users.repository.ts';
const WRITER = 'users/users.service.ts';

const WRITE_SQL = /\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+users\b/;
const ENTITY_REPOSITORY = /(?:InjectRepository|getRepository)\(\s*User\s*\)/;
const WRITE_METHODS =
  'insert|insertMany|insertUnlessTaken|update|updatePeopleFields|delete|bindSsoIdentity|clearSsoBinding|' +
  'replaceAvatar|insertFirstAdmin|insertGenerated|setAvatarIfNone';
/** A call of one of UsersRepository's write methods on the field or variable that holds it. */
const WRITE_CALL = new RegExp(`\\busers\\s*\\.\\s*(?:${WRITE_METHODS})\\s*\\(`);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sources(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [full] : [];
  });
}

const files = sources(SRC).map((file) => ({
  name: path.relative(SRC, file).split(path.sep).join('/'),
  text: readFileSync(file, 'utf8'),
}));

describe('the users writer is the one way to write a user', () => {
  it('finds the sources', () => {
    expect(files.map((file) => file.name)).toEqual(expect.arrayContaining([REPOSITORY, WRITER]));
  });

  it('keeps every INSERT, UPDATE and DELETE of users, and the User entity repository, in its repository', () => {
    const offenders = files
      .filter((file) => file.name !== REPOSITORY)
      .filter((file) => WRITE_SQL.test(file.text) || ENTITY_REPOSITORY.test(file.text))
      .map((file) => file.name);
    expect(offenders).toEqual([]);
  });

  it("lets only the writer call its repository's write methods", () => {
    const offenders = files
      .filter((file) => file.text.includes('users.repository.js'))
      .filter((file) => ![WRITER, REPOSITORY].includes(file.name))
      .filter((file) => WRITE_CALL.test(file.text))
      .map((file) => file.name);
    expect(offenders).toEqual([]);
  });
});
