import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { type CsvRow } from '../csv/csv-reader.js';
import { VALIDATOR_OPTIONS, validationMessages } from '../core/validation.js';
import { CreateUserDto } from './dto/create-user.dto.js';
import { ADMIN_MESSAGE, PASSWORD_MIN } from './user-rules.js';

export const USER_IMPORT_REQUIRED = ['username', 'email'] as const;
export const USER_IMPORT_OPTIONAL = ['admin', 'password'] as const;
export type UserImportColumn = (typeof USER_IMPORT_REQUIRED)[number] | (typeof USER_IMPORT_OPTIONAL)[number];

export const CLASH_MESSAGE = 'A user with this username or email already exists';
export const DUPLICATE_USERNAME_MESSAGE = 'Duplicate username in file';
export const DUPLICATE_EMAIL_MESSAGE = 'Duplicate email in file';

/** One row of the answer (docs/api.md §9). `password` only on a created row whose password was generated. */
interface UserImportRow {
  line: number;
  action: 'create' | 'unchanged' | 'error';
  username: string;
  id: number | null;
  errors?: string[];
  password?: string;
}

export interface UserImportResult {
  rows: UserImportRow[];
  created: number;
  unchanged: number;
  errors: number;
  dry_run: boolean;
}

/** A stored user as far as the import goes, lower-cased. */
export interface StoredIdentity {
  id: number;
  username: string;
  email: string;
}

/** A row that would be created, with what the insert needs. */
export interface PlannedUser {
  row: UserImportRow;
  username: string;
  email: string;
  admin: boolean;
  /** Undefined: generate one. */
  password: string | undefined;
}

const ADMIN_VALUES = new Map([
  ['', false],
  ['true', true],
  ['1', true],
  ['yes', true],
  ['false', false],
  ['0', false],
  ['no', false],
]);

/** `true`/`false`/`1`/`0`/`yes`/`no` (any case, trimmed), empty = false; else undefined. */
export function parseAdminCell(value: string): boolean | undefined {
  return ADMIN_VALUES.get(value.trim().toLowerCase());
}

/** The messages of `POST /api/users` for one row, in field order; an empty password means "generate one". */
function fieldErrors(cells: Record<UserImportColumn, string>, admin: boolean | undefined): string[] {
  const dto = plainToInstance(CreateUserDto, {
    username: cells.username,
    email: cells.email,
    // A stand-in that passes, so a missing password is not reported.
    password: cells.password === '' ? 'x'.repeat(PASSWORD_MIN) : cells.password,
  });
  const messages = validationMessages(validateSync(dto, VALIDATOR_OPTIONS));
  if (admin === undefined) messages.push(ADMIN_MESSAGE);
  return messages;
}

/**
 * Decides every row: `error` (field rules, a repeat inside the file, a clash with stored users), `unchanged`
 * (a stored user with that username and that email), else `create`. `stored` holds every stored user whose
 * username or email appears in the file.
 */
export function planUserImport(
  rows: readonly CsvRow<UserImportColumn>[],
  stored: readonly StoredIdentity[],
  dryRun: boolean,
): { result: UserImportResult; toCreate: PlannedUser[] } {
  const byUsername = new Map(stored.map((user) => [user.username, user]));
  const byEmail = new Map(stored.map((user) => [user.email, user]));
  const seenUsernames = new Set<string>();
  const seenEmails = new Set<string>();
  const toCreate: PlannedUser[] = [];
  const result: UserImportResult = { rows: [], created: 0, unchanged: 0, errors: 0, dry_run: dryRun };

  for (const { line, cells } of rows) {
    const admin = parseAdminCell(cells.admin);
    const errors = fieldErrors(cells, admin);
    const username = cells.username.toLowerCase();
    const email = cells.email.toLowerCase();
    if (seenUsernames.has(username)) errors.push(DUPLICATE_USERNAME_MESSAGE);
    if (seenEmails.has(email)) errors.push(DUPLICATE_EMAIL_MESSAGE);
    seenUsernames.add(username);
    seenEmails.add(email);

    const sameName = byUsername.get(username);
    const sameEmail = byEmail.get(email);
    const row: UserImportRow = { line, action: 'create', username: cells.username, id: null };
    if (errors.length === 0 && (sameName !== undefined || sameEmail !== undefined)) {
      if (sameName !== undefined && sameName === sameEmail) {
        row.action = 'unchanged';
        row.id = sameName.id;
      } else errors.push(CLASH_MESSAGE);
    }
    if (errors.length > 0) {
      row.action = 'error';
      row.errors = errors;
      result.errors++;
    } else if (row.action === 'unchanged') result.unchanged++;
    else {
      result.created++;
      toCreate.push({
        row,
        username: cells.username,
        email,
        admin: admin!,
        password: cells.password === '' ? undefined : cells.password,
      });
    }
    result.rows.push(row);
  }
  return { result, toCreate };
}
