import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { type CsvRow } from '../csv/csv-reader.js';
import { VALIDATOR_OPTIONS, validationMessages } from '../core/validation.js';
import { CreateUserDto } from './dto/create-user.dto.js';
import { ACTIVE_MESSAGE, ADMIN_MESSAGE, PASSWORD_MIN } from './user-rules.js';
import {
  CANNOT_DEACTIVATE_SELF_MESSAGE,
  DUPLICATE_EXTERNAL_ID_MESSAGE as EXTERNAL_ID_CLASH,
} from './users.errors.js';

export const USER_IMPORT_REQUIRED = ['username', 'email'] as const;
/** The §14 columns: when present in the file, they are set on created users and compared with stored ones. */
export const USER_IMPORT_PEOPLE = [
  'given_name',
  'family_name',
  'display_name',
  'external_id',
  'active',
] as const;
export const USER_IMPORT_OPTIONAL = ['admin', 'password', ...USER_IMPORT_PEOPLE] as const;
export type UserImportColumn = (typeof USER_IMPORT_REQUIRED)[number] | (typeof USER_IMPORT_OPTIONAL)[number];
type PeopleColumn = (typeof USER_IMPORT_PEOPLE)[number];

export const CLASH_MESSAGE = 'A user with this username or email already exists';
export const DUPLICATE_USERNAME_MESSAGE = 'Duplicate username in file';
export const DUPLICATE_EMAIL_MESSAGE = 'Duplicate email in file';
export const DUPLICATE_EXTERNAL_ID_MESSAGE = 'Duplicate external_id in file';
export const EXTERNAL_ID_CLASH_MESSAGE = EXTERNAL_ID_CLASH;

/** One row of the answer (docs/api.md §9). `password` only on a created row whose password was generated. */
interface UserImportRow {
  line: number;
  action: 'create' | 'update' | 'unchanged' | 'error';
  username: string;
  id: number | null;
  errors?: string[];
  password?: string;
}

export interface UserImportResult {
  rows: UserImportRow[];
  created: number;
  updated: number;
  unchanged: number;
  errors: number;
  dry_run: boolean;
}

/** §14's fields as the import reads and stores them. */
export interface PeopleValues {
  givenName: string | null;
  familyName: string | null;
  displayName: string | null;
  externalId: string | null;
  active: boolean;
}

/** A stored user as far as the import goes: username and email lower-cased, §14's fields as stored. */
export interface StoredIdentity extends PeopleValues {
  id: number;
  username: string;
  email: string;
}

/** A row that would be created, with what the insert needs. */
export interface PlannedUser extends Partial<PeopleValues> {
  row: UserImportRow;
  username: string;
  email: string;
  admin: boolean;
  /** Undefined: generate one. */
  password: string | undefined;
}

/** A stored user the file changes: the §14 fields that differ, with their stored values. */
export interface PlannedUpdate {
  row: UserImportRow;
  id: number;
  username: string;
  changes: Partial<PeopleValues>;
  before: Partial<PeopleValues>;
}

const PROPERTY: Record<PeopleColumn, keyof PeopleValues> = {
  given_name: 'givenName',
  family_name: 'familyName',
  display_name: 'displayName',
  external_id: 'externalId',
  active: 'active',
};

const BOOLEAN_VALUES = new Map([
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
  return BOOLEAN_VALUES.get(value.trim().toLowerCase());
}

/** As `admin`, but an empty cell is true (docs/api.md §9). */
export function parseActiveCell(value: string): boolean | undefined {
  return value.trim() === '' ? true : parseAdminCell(value);
}

/** The §14 values of the columns the file has (an empty cell is null; `active` undefined when unreadable). */
function peopleValues(row: CsvRow<UserImportColumn>): Partial<Record<PeopleColumn, string | boolean | null>> {
  const values: Partial<Record<PeopleColumn, string | boolean | null>> = {};
  for (const column of USER_IMPORT_PEOPLE) {
    if (row.absent?.has(column)) continue;
    const cell = row.cells[column];
    if (column === 'active') {
      const active = parseActiveCell(cell);
      if (active !== undefined) values.active = active;
    } else values[column] = cell === '' ? null : cell;
  }
  return values;
}

/** The messages of `POST /api/users` for one row, in field order; an empty password means "generate one". */
function fieldErrors(
  cells: Record<UserImportColumn, string>,
  people: Partial<Record<PeopleColumn, string | boolean | null>>,
  admin: boolean | undefined,
  activeUnreadable: boolean,
): string[] {
  const dto = plainToInstance(CreateUserDto, {
    username: cells.username,
    email: cells.email,
    // A stand-in that passes, so a missing password is not reported.
    password: cells.password === '' ? 'x'.repeat(PASSWORD_MIN) : cells.password,
    given_name: people.given_name,
    family_name: people.family_name,
    display_name: people.display_name,
    external_id: people.external_id,
  });
  const messages = validationMessages(validateSync(dto, VALIDATOR_OPTIONS));
  if (admin === undefined) messages.push(ADMIN_MESSAGE);
  if (activeUnreadable) messages.push(ACTIVE_MESSAGE);
  return messages;
}

/**
 * Decides every row: `error` (field rules, a repeat inside the file, a clash with stored users), `update` (a
 * stored user with that username and that email whose §14 columns in the file differ), `unchanged` (the same,
 * nothing different), else `create`. `stored` holds every stored user whose username, email or external_id
 * appears in the file; `callerId` may not deactivate themself.
 */
export function planUserImport(
  rows: readonly CsvRow<UserImportColumn>[],
  stored: readonly StoredIdentity[],
  dryRun: boolean,
  callerId?: number,
): { result: UserImportResult; toCreate: PlannedUser[]; toUpdate: PlannedUpdate[] } {
  const byUsername = new Map(stored.map((user) => [user.username, user]));
  const byEmail = new Map(stored.map((user) => [user.email, user]));
  const byExternalId = new Map(
    stored.filter((user) => user.externalId !== null).map((user) => [user.externalId!, user]),
  );
  const seenUsernames = new Set<string>();
  const seenEmails = new Set<string>();
  const seenExternalIds = new Set<string>();
  const toCreate: PlannedUser[] = [];
  const toUpdate: PlannedUpdate[] = [];
  const result: UserImportResult = {
    rows: [],
    created: 0,
    updated: 0,
    unchanged: 0,
    errors: 0,
    dry_run: dryRun,
  };

  for (const csvRow of rows) {
    const { line, cells } = csvRow;
    const admin = parseAdminCell(cells.admin);
    const people = peopleValues(csvRow);
    const activeUnreadable = !csvRow.absent?.has('active') && parseActiveCell(cells.active) === undefined;
    const errors = fieldErrors(cells, people, admin, activeUnreadable);
    const username = cells.username.toLowerCase();
    const email = cells.email.toLowerCase();
    const externalId = typeof people.external_id === 'string' ? people.external_id : null;
    if (seenUsernames.has(username)) errors.push(DUPLICATE_USERNAME_MESSAGE);
    if (seenEmails.has(email)) errors.push(DUPLICATE_EMAIL_MESSAGE);
    if (externalId !== null && seenExternalIds.has(externalId)) errors.push(DUPLICATE_EXTERNAL_ID_MESSAGE);
    seenUsernames.add(username);
    seenEmails.add(email);
    if (externalId !== null) seenExternalIds.add(externalId);

    const sameName = byUsername.get(username);
    const sameEmail = byEmail.get(email);
    const row: UserImportRow = { line, action: 'create', username: cells.username, id: null };
    let update: PlannedUpdate | undefined;
    if (errors.length === 0) {
      const self = sameName !== undefined && sameName === sameEmail ? sameName : undefined;
      if ((sameName !== undefined || sameEmail !== undefined) && self === undefined)
        errors.push(CLASH_MESSAGE);
      const holder = externalId === null ? undefined : byExternalId.get(externalId);
      if (holder !== undefined && holder !== self) errors.push(EXTERNAL_ID_CLASH_MESSAGE);
      if (self !== undefined && errors.length === 0) {
        row.id = Number(self.id);
        update = changesOf(row, self, people);
        row.action = update === undefined ? 'unchanged' : 'update';
        if (update?.changes.active === false && callerId !== undefined && Number(self.id) === callerId)
          errors.push(CANNOT_DEACTIVATE_SELF_MESSAGE);
      }
    }
    if (errors.length > 0) {
      row.action = 'error';
      row.id = null;
      row.errors = errors;
      result.errors++;
    } else if (row.action === 'unchanged') result.unchanged++;
    else if (row.action === 'update') {
      result.updated++;
      toUpdate.push(update!);
    } else {
      result.created++;
      toCreate.push({
        row,
        username: cells.username,
        email,
        admin: admin!,
        password: cells.password === '' ? undefined : cells.password,
        ...Object.fromEntries(
          Object.entries(people).map(([column, value]) => [PROPERTY[column as PeopleColumn], value]),
        ),
      });
    }
    result.rows.push(row);
  }
  return { result, toCreate, toUpdate };
}

/** The §14 fields of the file that differ from the stored user's, or undefined when none does. */
function changesOf(
  row: UserImportRow,
  stored: StoredIdentity,
  people: Partial<Record<PeopleColumn, string | boolean | null>>,
): PlannedUpdate | undefined {
  const changes: Partial<PeopleValues> = {};
  const before: Partial<PeopleValues> = {};
  for (const [column, value] of Object.entries(people) as [PeopleColumn, string | boolean | null][]) {
    const property = PROPERTY[column];
    if (stored[property] === value) continue;
    (changes as Record<string, unknown>)[property] = value;
    (before as Record<string, unknown>)[property] = stored[property];
  }
  if (Object.keys(changes).length === 0) return undefined;
  return { row, id: Number(stored.id), username: stored.username, changes, before };
}
