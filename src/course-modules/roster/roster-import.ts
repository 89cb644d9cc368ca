import { type CsvRow } from '../../csv/csv-reader.js';
import { PERMISSION_DENIED_MESSAGE } from '../../core/errors.js';
import { type ModuleViewer } from '../modules/module-access.js';
import { INVALID_ROLE_MESSAGE, ModuleRole, parseModuleRole } from '../modules/module-role.js';
import { parseTimestamp } from '../membership/dto/membership-fields.js';
import { lifecycleChanged } from '../membership/membership-changes.js';
import {
  DATES_ORDER_MESSAGE,
  INVALID_STATUS_MESSAGE,
  MEMBERSHIP_STATUSES,
  MembershipStatus,
  timestampMessage,
} from '../membership/membership-status.js';
import { type Member, type MembershipWrite } from '../membership/membership-status.js';

export const ROSTER_COLUMNS = ['user', 'role'] as const;
/** The membership columns (docs/api.md §15): each optional; a file without one keeps the stored values. */
export const ROSTER_OPTIONAL_COLUMNS = ['status', 'starts_at', 'ends_at'] as const;
export type RosterOptionalColumn = (typeof ROSTER_OPTIONAL_COLUMNS)[number];
export type RosterColumn = (typeof ROSTER_COLUMNS)[number] | RosterOptionalColumn;
export type RosterMode = 'add' | 'sync';
/** What `sync` does to a member missing from the file: delete the role row, or end the membership. */
export type OnRemove = 'delete' | 'complete' | 'inactivate';
export const ON_REMOVE_VALUES: readonly OnRemove[] = ['delete', 'complete', 'inactivate'];
export const ON_REMOVE_MESSAGE = 'on_remove must be one of delete, complete, inactivate';

/** The stored status `on_remove` gives a member missing from the file (none for `delete`). */
export const concludedStatus = (onRemove: OnRemove): MembershipStatus | undefined =>
  onRemove === 'complete'
    ? MembershipStatus.Completed
    : onRemove === 'inactivate'
      ? MembershipStatus.Inactive
      : undefined;

export const DUPLICATE_USER_MESSAGE = 'Duplicate user in file';
export const unknownUserMessage = (value: string) => `Unknown user: ${value}`;

interface RosterImportRow {
  line: number;
  action: 'assign' | 'change' | 'unchanged' | 'error';
  user: string;
  user_id: number | null;
  /** Canonical when valid, else as sent. */
  role: string;
  errors?: string[];
}

interface RemovedMember {
  user_id: number;
  username: string;
  role: ModuleRole;
}

export interface RosterImportResult {
  rows: RosterImportRow[];
  assigned: number;
  changed: number;
  unchanged: number;
  removed: RemovedMember[];
  errors: number;
  exceeds_limit: boolean;
  dry_run: boolean;
}

export interface KnownUser {
  id: number;
  username: string;
}

interface RosterPlanInput {
  rows: readonly CsvRow<RosterColumn>[];
  /** Stored users by lower-cased username and by lower-cased email. */
  users: ReadonlyMap<string, KnownUser>;
  /** The module's current members. */
  members: readonly Member[];
  viewer: ModuleViewer;
  mode: RosterMode;
  onRemove: OnRemove;
  /** The optional columns the file has. */
  columns: ReadonlySet<RosterOptionalColumn>;
  /** Undefined: 10 % of the members the caller may remove, rounded down. */
  maxRemovals: number | undefined;
  dryRun: boolean;
}

/** The value of a `user` cell as looked up: trimmed, lower-cased. */
export const userKey = (value: string) => value.trim().toLowerCase();

/** May the caller take this member off the roster? A Lecturer never removes Lecturers. */
const mayRemove = (viewer: ModuleViewer, member: Member) =>
  viewer.admin || member.role !== ModuleRole.Lecturer;

/** A row's membership fields: the values of the columns the file has (an empty cell: the default), or errors. */
function rowMembership(
  cells: Record<RosterColumn, string>,
  columns: ReadonlySet<RosterOptionalColumn>,
  errors: string[],
): { status?: MembershipStatus; startsAt?: Date | null; endsAt?: Date | null } {
  const fields: { status?: MembershipStatus; startsAt?: Date | null; endsAt?: Date | null } = {};
  if (columns.has('status')) {
    const value = cells.status.trim().toLowerCase();
    if (value === '') fields.status = MembershipStatus.Active;
    else if (MEMBERSHIP_STATUSES.includes(value as MembershipStatus))
      fields.status = value as MembershipStatus;
    else errors.push(INVALID_STATUS_MESSAGE);
  }
  for (const [column, key] of [
    ['starts_at', 'startsAt'],
    ['ends_at', 'endsAt'],
  ] as const) {
    if (!columns.has(column)) continue;
    const value = cells[column].trim();
    const date = value === '' ? null : parseTimestamp(value);
    if (date === undefined) errors.push(timestampMessage(column));
    else fields[key] = date;
  }
  return fields;
}

/** Decides every row, and for `sync` whom to remove; `writes` are the memberships to write. */
export function planRosterImport(input: RosterPlanInput): {
  result: RosterImportResult;
  writes: MembershipWrite[];
  /** How many members `sync` may remove. */
  limit: number;
} {
  const { viewer } = input;
  const current = new Map(input.members.map((member) => [member.id, member]));
  const seen = new Set<string>();
  const listed = new Set<number>();
  const writes: MembershipWrite[] = [];
  const result: RosterImportResult = {
    rows: [],
    assigned: 0,
    changed: 0,
    unchanged: 0,
    removed: [],
    errors: 0,
    exceeds_limit: false,
    dry_run: input.dryRun,
  };

  for (const { line, cells } of input.rows) {
    const errors: string[] = [];
    const user = input.users.get(userKey(cells.user));
    const role = parseModuleRole(cells.role.trim());
    if (user === undefined) errors.push(unknownUserMessage(cells.user));
    if (role === undefined) errors.push(INVALID_ROLE_MESSAGE);
    const key = user === undefined ? `value:${userKey(cells.user)}` : `id:${user.id}`;
    if (seen.has(key)) errors.push(DUPLICATE_USER_MESSAGE);
    seen.add(key);
    if (user !== undefined) listed.add(user.id);

    const member = user === undefined ? undefined : current.get(user.id);
    const held = member?.role;
    const fields = rowMembership(cells, input.columns, errors);
    const write: MembershipWrite | undefined =
      user === undefined || role === undefined
        ? undefined
        : {
            userId: String(user.id),
            role,
            status: fields.status ?? member?.status ?? MembershipStatus.Active,
            startsAt: fields.startsAt !== undefined ? fields.startsAt : (member?.startsAt ?? null),
            endsAt: fields.endsAt !== undefined ? fields.endsAt : (member?.endsAt ?? null),
          };
    if (write?.startsAt && write.endsAt && write.endsAt.getTime() <= write.startsAt.getTime())
      errors.push(DATES_ORDER_MESSAGE);
    const row: RosterImportRow = {
      line,
      action: 'error',
      user: cells.user,
      user_id: user?.id ?? null,
      role: role ?? cells.role,
    };
    // A Lecturer may not name the Lecturer role, nor change an existing Lecturer's role.
    if (!viewer.admin && role !== undefined && (role === ModuleRole.Lecturer || held === ModuleRole.Lecturer))
      errors.push(PERMISSION_DENIED_MESSAGE);
    if (errors.length > 0) {
      row.errors = errors;
      result.errors++;
    } else if (member === undefined) {
      row.action = 'assign';
      result.assigned++;
      writes.push(write!);
    } else if (held !== role || lifecycleChanged({ ...member, userId: write!.userId }, write!)) {
      row.action = 'change';
      result.changed++;
      writes.push(write!);
    } else {
      row.action = 'unchanged';
      result.unchanged++;
    }
    result.rows.push(row);
  }

  const removable = input.members.filter((member) => mayRemove(viewer, member));
  const limit = input.maxRemovals ?? Math.floor(removable.length / 10);
  if (input.mode === 'sync') {
    // Concluding leaves alone a membership already concluded (not `active`): a second run changes nothing.
    const concluding = input.onRemove !== 'delete';
    result.removed = removable
      .filter((member) => !listed.has(member.id))
      .filter((member) => !concluding || member.status === MembershipStatus.Active)
      .map((member) => ({ user_id: member.id, username: member.username, role: member.role }));
    result.exceeds_limit = result.removed.length > limit;
  }
  return { result, writes, limit };
}
