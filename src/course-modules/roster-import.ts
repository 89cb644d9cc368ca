import { type CsvRow } from '../csv/csv-reader.js';
import { PERMISSION_DENIED_MESSAGE } from '../core/errors.js';
import { type ModuleViewer } from './module-access.js';
import { INVALID_ROLE_MESSAGE, ModuleRole, parseModuleRole } from './module-role.js';

export const ROSTER_COLUMNS = ['user', 'role'] as const;
export type RosterColumn = (typeof ROSTER_COLUMNS)[number];
export type RosterMode = 'add' | 'sync';

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

export interface Member extends KnownUser {
  role: ModuleRole;
}

interface RosterPlanInput {
  rows: readonly CsvRow<RosterColumn>[];
  /** Stored users by lower-cased username and by lower-cased email. */
  users: ReadonlyMap<string, KnownUser>;
  /** The module's current members. */
  members: readonly Member[];
  viewer: ModuleViewer;
  mode: RosterMode;
  /** Undefined: 10 % of the members the caller may remove, rounded down. */
  maxRemovals: number | undefined;
  dryRun: boolean;
}

/** The value of a `user` cell as looked up: trimmed, lower-cased. */
export const userKey = (value: string) => value.trim().toLowerCase();

/** May the caller take this member off the roster? A Lecturer never removes Lecturers. */
const mayRemove = (viewer: ModuleViewer, member: Member) =>
  viewer.admin || member.role !== ModuleRole.Lecturer;

/** Decides every row, and for `sync` whom to remove; `writes` are the role assignments to make. */
export function planRosterImport(input: RosterPlanInput): {
  result: RosterImportResult;
  writes: { userId: number; role: ModuleRole }[];
  /** How many members `sync` may remove. */
  limit: number;
} {
  const { viewer } = input;
  const current = new Map(input.members.map((member) => [member.id, member]));
  const seen = new Set<string>();
  const listed = new Set<number>();
  const writes: { userId: number; role: ModuleRole }[] = [];
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

    const held = user === undefined ? undefined : current.get(user.id)?.role;
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
    } else if (held === undefined) {
      row.action = 'assign';
      result.assigned++;
      writes.push({ userId: user!.id, role: role! });
    } else if (held !== role) {
      row.action = 'change';
      result.changed++;
      writes.push({ userId: user!.id, role: role! });
    } else {
      row.action = 'unchanged';
      result.unchanged++;
    }
    result.rows.push(row);
  }

  const removable = input.members.filter((member) => mayRemove(viewer, member));
  const limit = input.maxRemovals ?? Math.floor(removable.length / 10);
  if (input.mode === 'sync') {
    result.removed = removable
      .filter((member) => !listed.has(member.id))
      .map((member) => ({ user_id: member.id, username: member.username, role: member.role }));
    result.exceeds_limit = result.removed.length > limit;
  }
  return { result, writes, limit };
}
