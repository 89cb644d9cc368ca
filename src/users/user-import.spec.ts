import { type CsvRow } from '../csv/csv-reader.js';
import {
  CLASH_MESSAGE,
  DUPLICATE_EMAIL_MESSAGE,
  DUPLICATE_EXTERNAL_ID_MESSAGE,
  EXTERNAL_ID_CLASH_MESSAGE,
  DUPLICATE_USERNAME_MESSAGE,
  parseAdminCell,
  planUserImport,
  type StoredIdentity,
  type UserImportColumn,
  USER_IMPORT_OPTIONAL,
  USER_IMPORT_PEOPLE,
} from './user-import.js';
import { ADMIN_MESSAGE, EMAIL_MESSAGE, PASSWORD_MESSAGE, USERNAME_MESSAGE } from './user-rules.js';

/** A data row as the CSV reader gives it; the header is line 1, so the first row is line 2. */
/** The §14 columns the row's cells name are present in the file, the others absent. */
function row(line: number, cells: Partial<Record<UserImportColumn, string>>): CsvRow<UserImportColumn> {
  const all = { ...Object.fromEntries(USER_IMPORT_OPTIONAL.map((column) => [column, ''])), ...cells };
  return {
    line,
    cells: { username: '', email: '', ...all } as Record<UserImportColumn, string>,
    absent: new Set(USER_IMPORT_PEOPLE.filter((column) => !(column in cells))),
  };
}

/** A stored user with §14's defaults. */
const storedUser = (id: number, username: string, email: string, fields: Partial<StoredIdentity> = {}) => ({
  id,
  username,
  email,
  givenName: null,
  familyName: null,
  displayName: null,
  externalId: null,
  active: true,
  ...fields,
});

const ada = (line = 2) => row(line, { username: 'ada', email: 'ada@example.edu' });

describe(planUserImport.name, () => {
  it('plans a valid row as a create with its lower-cased email, admin flag and password', () => {
    const { result, toCreate } = planUserImport(
      [
        row(2, { username: 'Ada', email: 'Ada@Example.EDU', admin: 'yes', password: 'a-long-password' }),
        row(3, { username: 'bob', email: 'bob@example.edu' }),
      ],
      [],
      false,
    );
    expect(result).toEqual({
      rows: [
        { line: 2, action: 'create', username: 'Ada', id: null },
        { line: 3, action: 'create', username: 'bob', id: null },
      ],
      created: 2,
      updated: 0,
      unchanged: 0,
      errors: 0,
      dry_run: false,
    });
    expect(toCreate.map(({ row: _row, ...user }) => user)).toEqual([
      // The username keeps its case, the email is stored lower-case.
      { username: 'Ada', email: 'ada@example.edu', admin: true, password: 'a-long-password' },
      // No password: one is generated later.
      { username: 'bob', email: 'bob@example.edu', admin: false, password: undefined },
    ]);
    // The planned row is the one in the answer, so the insert can fill in its id.
    expect(toCreate[0].row).toBe(result.rows[0]);
  });

  it('reports every broken field of a row, in field order, with its line', () => {
    const { result, toCreate } = planUserImport(
      [ada(2), row(5, { username: 'x', email: 'not-an-email', admin: 'maybe', password: 'short' })],
      [],
      true,
    );
    expect(result.rows[1]).toEqual({
      line: 5,
      action: 'error',
      username: 'x',
      id: null,
      errors: [USERNAME_MESSAGE, EMAIL_MESSAGE, PASSWORD_MESSAGE, ADMIN_MESSAGE],
    });
    expect(result).toMatchObject({ created: 1, errors: 1, unchanged: 0, dry_run: true });
    expect(toCreate).toHaveLength(1);
  });

  it('refuses a repeated username or email inside the file, case-insensitively, on the later row only', () => {
    const { result, toCreate } = planUserImport(
      [
        ada(2),
        row(3, { username: 'ADA', email: 'other@example.edu' }),
        row(4, { username: 'eve', email: 'ADA@example.edu' }),
        row(5, { username: 'Ada', email: 'Ada@Example.edu' }),
      ],
      [],
      false,
    );
    expect(result.rows.map((r) => [r.line, r.action, r.errors])).toEqual([
      [2, 'create', undefined],
      [3, 'error', [DUPLICATE_USERNAME_MESSAGE]],
      [4, 'error', [DUPLICATE_EMAIL_MESSAGE]],
      [5, 'error', [DUPLICATE_USERNAME_MESSAGE, DUPLICATE_EMAIL_MESSAGE]],
    ]);
    expect(toCreate.map((user) => user.username)).toEqual(['ada']);
  });

  it('leaves a stored user with that username and that email unchanged, with its id', () => {
    const stored: StoredIdentity[] = [storedUser(41, 'ada', 'ada@example.edu')];
    const { result, toCreate } = planUserImport(
      [row(2, { username: 'ADA', email: 'Ada@example.edu' })],
      stored,
      false,
    );
    expect(result.rows).toEqual([{ line: 2, action: 'unchanged', username: 'ADA', id: 41 }]);
    expect(result).toMatchObject({ created: 0, unchanged: 1, errors: 0 });
    expect(toCreate).toEqual([]);
  });

  it('refuses a row whose username or email belongs to a stored user, or to two different ones', () => {
    const stored: StoredIdentity[] = [
      storedUser(1, 'ada', 'ada@example.edu'),
      storedUser(2, 'bob', 'bob@example.edu'),
    ];
    const outcome = (cells: Partial<Record<UserImportColumn, string>>) =>
      planUserImport([row(7, cells)], stored, false).result;
    for (const result of [
      outcome({ username: 'ada', email: 'new@example.edu' }),
      outcome({ username: 'new', email: 'BOB@example.edu' }),
      outcome({ username: 'ada', email: 'bob@example.edu' }),
    ]) {
      expect(result.rows).toEqual([
        { line: 7, action: 'error', username: expect.any(String), id: null, errors: [CLASH_MESSAGE] },
      ]);
      expect(result).toMatchObject({ created: 0, unchanged: 0, errors: 1 });
    }
  });

  it('reports only the field errors of an invalid row that also clashes', () => {
    const stored: StoredIdentity[] = [storedUser(1, 'ada', 'ada@example.edu')];
    const { result } = planUserImport(
      [row(2, { username: 'ada', email: 'ada@example.edu', admin: 'perhaps' })],
      stored,
      false,
    );
    expect(result.rows[0]).toMatchObject({ action: 'error', id: null, errors: [ADMIN_MESSAGE] });
  });
});

describe(`${planUserImport.name}: the §14 columns`, () => {
  it('updates a stored user whose §14 columns in the file differ, and only those fields', () => {
    const stored = [storedUser(41, 'ada', 'ada@example.edu', { givenName: 'Ada', familyName: 'Byron' })];
    const { result, toUpdate, toCreate } = planUserImport(
      [
        row(2, {
          username: 'ada',
          email: 'ada@example.edu',
          given_name: 'Ada',
          family_name: 'Lovelace',
          active: 'no',
        }),
      ],
      stored,
      true,
    );
    expect(result.rows).toEqual([{ line: 2, action: 'update', username: 'ada', id: 41 }]);
    expect(result).toMatchObject({ created: 0, updated: 1, unchanged: 0, errors: 0 });
    expect(toCreate).toEqual([]);
    expect(toUpdate.map(({ row: _row, ...update }) => update)).toEqual([
      {
        id: 41,
        username: 'ada',
        changes: { familyName: 'Lovelace', active: false },
        before: { familyName: 'Byron', active: true },
      },
    ]);
  });

  it('reads an empty cell as null, and an empty active cell as true', () => {
    const stored = [storedUser(41, 'ada', 'ada@example.edu', { displayName: 'Ada L.', active: false })];
    const { toUpdate } = planUserImport(
      [row(2, { username: 'ada', email: 'ada@example.edu', display_name: '', active: '' })],
      stored,
      false,
    );
    expect(toUpdate[0].changes).toEqual({ displayName: null, active: true });
  });

  it('leaves a user unchanged when the file lacks the §14 columns or repeats the stored values', () => {
    const stored = [storedUser(41, 'ada', 'ada@example.edu', { externalId: 'X-1' })];
    for (const cells of [{}, { external_id: 'X-1', active: 'true', given_name: '' }]) {
      const { result } = planUserImport(
        [row(2, { username: 'ada', email: 'ada@example.edu', ...cells })],
        stored,
        false,
      );
      expect(result.rows[0].action).toBe('unchanged');
    }
  });

  it('refuses an external_id held by another user (case-sensitively) or repeated in the file', () => {
    const stored = [storedUser(41, 'ada', 'ada@example.edu', { externalId: 'X-1' })];
    const { result } = planUserImport(
      [
        row(2, { username: 'bob', email: 'bob@example.edu', external_id: 'X-1' }),
        row(3, { username: 'eve', email: 'eve@example.edu', external_id: 'x-1' }),
        row(4, { username: 'kim', email: 'kim@example.edu', external_id: 'x-1' }),
      ],
      stored,
      false,
    );
    expect(result.rows.map((r) => [r.action, r.errors])).toEqual([
      ['error', [EXTERNAL_ID_CLASH_MESSAGE]],
      ['create', undefined],
      ['error', [DUPLICATE_EXTERNAL_ID_MESSAGE]],
    ]);
  });

  it("checks the §14 fields with the user routes' messages", () => {
    const { result } = planUserImport(
      [
        row(2, {
          username: 'ada',
          email: 'ada@example.edu',
          given_name: 'g'.repeat(101),
          display_name: 'd'.repeat(201),
          external_id: 'e'.repeat(256),
          active: 'maybe',
        }),
      ],
      [],
      false,
    );
    expect(result.rows[0].errors).toEqual([
      'given_name must be at most 100 characters',
      'display_name must be at most 200 characters',
      'external_id must be 1-255 characters',
      'active must be a boolean',
    ]);
  });

  it('refuses a row that would deactivate the caller', () => {
    const stored = [storedUser(7, 'admin', 'admin@example.edu')];
    const { result } = planUserImport(
      [row(2, { username: 'admin', email: 'admin@example.edu', active: 'false' })],
      stored,
      false,
      7,
    );
    expect(result.rows[0]).toMatchObject({
      action: 'error',
      errors: ['You cannot deactivate your own account'],
    });
  });
});

describe(parseAdminCell.name, () => {
  it.each([
    ['', false],
    ['true', true],
    [' TRUE ', true],
    ['1', true],
    ['Yes', true],
    ['false', false],
    ['0', false],
    ['NO', false],
    ['maybe', undefined],
    ['2', undefined],
    ['t', undefined],
  ])('reads %j as %j', (cell, expected) => {
    expect(parseAdminCell(cell)).toBe(expected);
  });
});
