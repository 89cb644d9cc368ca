import { serviceSources } from '../testing/sources.js';

// The users writer (docs/architecture.md, "The users writer"): UsersService decides, its two writing
// repositories write: UsersRepository one user at a time, UserBulkRepository many at once.
const REPOSITORIES = ['users/users.repository.ts', 'users/user-bulk.repository.ts'];
const WRITER = 'users/users.service.ts';

const WRITE_SQL = /\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+users\b/;
const ENTITY_REPOSITORY = /(?:InjectRepository|getRepository)\(\s*User\s*\)/;
const WRITE_METHODS =
  'insert|insertMany|insertUnlessTaken|update|updatePeopleFields|delete|bindSsoIdentity|clearSsoBinding|' +
  'replaceAvatar|insertFirstAdmin|insertGenerated|setAvatarIfNone';
/** A call of one of those repositories' write methods on the field or variable that holds it. */
const WRITE_CALL = new RegExp(`\\busers\\s*\\.\\s*(?:${WRITE_METHODS})\\s*\\(`);

const files = serviceSources();

describe('the users writer is the one way to write a user', () => {
  it('finds the sources', () => {
    expect(files.map((file) => file.name)).toEqual(expect.arrayContaining([...REPOSITORIES, WRITER]));
  });

  it('keeps every INSERT, UPDATE and DELETE of users, and the User entity repository, in its repositories', () => {
    const offenders = files
      .filter((file) => !REPOSITORIES.includes(file.name))
      .filter((file) => WRITE_SQL.test(file.text) || ENTITY_REPOSITORY.test(file.text))
      .map((file) => file.name);
    expect(offenders).toEqual([]);
  });

  it("lets only the writer call its repositories' write methods", () => {
    const offenders = files
      .filter(
        (file) => file.text.includes('users.repository.js') || file.text.includes('user-bulk.repository.js'),
      )
      .filter((file) => ![WRITER, ...REPOSITORIES].includes(file.name))
      .filter((file) => WRITE_CALL.test(file.text))
      .map((file) => file.name);
    expect(offenders).toEqual([]);
  });
});
