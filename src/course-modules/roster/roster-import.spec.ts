import { PERMISSION_DENIED_MESSAGE } from '../../core/errors.js';
import { type CsvRow } from '../../csv/csv-reader.js';
import { type ModuleViewer } from '../modules/module-access.js';
import { INVALID_ROLE_MESSAGE, ModuleRole } from '../modules/module-role.js';
import { type Member, MembershipStatus } from '../membership/membership-status.js';
import {
  DUPLICATE_USER_MESSAGE,
  type KnownUser,
  planRosterImport,
  type RosterColumn,
  type RosterMode,
  unknownUserMessage,
  userKey,
} from './roster-import.js';

/** An active membership with no dates (the default). */
const OPEN = { status: MembershipStatus.Active, startsAt: null, endsAt: null };

const ADMIN: ModuleViewer = { admin: true, role: null };
const LECTURER: ModuleViewer = { admin: false, role: ModuleRole.Lecturer };

const ada: KnownUser = { id: 1, username: 'ada' };
const bob: KnownUser = { id: 2, username: 'bob' };
const cy: KnownUser = { id: 3, username: 'cy' };
const dee: KnownUser = { id: 4, username: 'dee' };

/** Stored users by lower-cased username and email, as the roster service looks them up. */
const USERS: ReadonlyMap<string, KnownUser> = new Map(
  [ada, bob, cy, dee].flatMap((user) => [
    [user.username, user],
    [`${user.username}@example.edu`, user],
  ]),
);

/** Data rows from line 2 on (the header is line 1). */
const rows = (...lines: [string, string][]): CsvRow<RosterColumn>[] =>
  lines.map(([user, role], index) => ({
    line: index + 2,
    cells: { user, role, status: '', starts_at: '', ends_at: '' },
  }));

function plan(
  lines: [string, string][],
  {
    members = [],
    viewer = ADMIN,
    mode = 'add',
    maxRemovals,
  }: { members?: Member[]; viewer?: ModuleViewer; mode?: RosterMode; maxRemovals?: number } = {},
) {
  return planRosterImport({
    rows: rows(...lines),
    users: USERS,
    members,
    viewer,
    mode,
    onRemove: 'delete',
    columns: new Set(),
    maxRemovals,
    dryRun: false,
  });
}

describe(planRosterImport.name, () => {
  it('assigns new members, changes a different role and leaves the same role unchanged', () => {
    const { result, writes } = plan(
      [
        ['ada', 'student'],
        [' BOB@example.edu ', 'Tutor'],
        ['cy', 'assistant_lecturer'],
      ],
      {
        members: [
          { ...bob, role: ModuleRole.Student, ...OPEN },
          { ...cy, role: ModuleRole.AssistantLecturer, ...OPEN },
        ],
      },
    );
    expect(result.rows).toEqual([
      { line: 2, action: 'assign', user: 'ada', user_id: 1, role: ModuleRole.Student },
      { line: 3, action: 'change', user: ' BOB@example.edu ', user_id: 2, role: ModuleRole.Tutor },
      { line: 4, action: 'unchanged', user: 'cy', user_id: 3, role: ModuleRole.AssistantLecturer },
    ]);
    expect(result).toMatchObject({ assigned: 1, changed: 1, unchanged: 1, errors: 0, removed: [] });
    expect(writes).toEqual([
      { userId: '1', role: ModuleRole.Student, ...OPEN },
      { userId: '2', role: ModuleRole.Tutor, ...OPEN },
    ]);
  });

  it('names an unknown user and a bad role on the row, keeping the role as sent', () => {
    const { result, writes } = plan([
      ['nobody', 'Student'],
      ['ada', 'Dean'],
      ['ghost', 'boss'],
    ]);
    expect(result.rows).toEqual([
      {
        line: 2,
        action: 'error',
        user: 'nobody',
        user_id: null,
        role: 'Student',
        errors: [unknownUserMessage('nobody')],
      },
      { line: 3, action: 'error', user: 'ada', user_id: 1, role: 'Dean', errors: [INVALID_ROLE_MESSAGE] },
      {
        line: 4,
        action: 'error',
        user: 'ghost',
        user_id: null,
        role: 'boss',
        errors: [unknownUserMessage('ghost'), INVALID_ROLE_MESSAGE],
      },
    ]);
    expect(result.errors).toBe(3);
    expect(writes).toEqual([]);
  });

  it('refuses the same user named twice in the file, by username or email, on the later row', () => {
    const { result, writes } = plan([
      ['ada', 'Student'],
      ['ADA@example.edu', 'Tutor'],
      ['nobody', 'Student'],
      ['Nobody', 'Student'],
    ]);
    expect(result.rows.map((row) => [row.line, row.action, row.errors])).toEqual([
      [2, 'assign', undefined],
      [3, 'error', [DUPLICATE_USER_MESSAGE]],
      [4, 'error', [unknownUserMessage('nobody')]],
      [5, 'error', [unknownUserMessage('Nobody'), DUPLICATE_USER_MESSAGE]],
    ]);
    expect(writes).toEqual([{ userId: '1', role: ModuleRole.Student, ...OPEN }]);
  });

  it("refuses a Lecturer naming the Lecturer role or changing a Lecturer's role", () => {
    const { result, writes } = plan(
      [
        ['ada', 'Lecturer'],
        ['bob', 'Student'],
        ['cy', 'Tutor'],
      ],
      { viewer: LECTURER, members: [{ ...bob, role: ModuleRole.Lecturer, ...OPEN }] },
    );
    expect(result.rows.map((row) => [row.action, row.errors])).toEqual([
      ['error', [PERMISSION_DENIED_MESSAGE]],
      ['error', [PERMISSION_DENIED_MESSAGE]],
      ['assign', undefined],
    ]);
    expect(writes).toEqual([{ userId: '3', role: ModuleRole.Tutor, ...OPEN }]);
    // An admin may do both.
    expect(
      plan(
        [
          ['ada', 'Lecturer'],
          ['bob', 'Student'],
        ],
        { members: [{ ...bob, role: ModuleRole.Lecturer, ...OPEN }] },
      ).result.errors,
    ).toBe(0);
  });

  it('removes in sync mode the members the file does not list, never a Lecturer for a Lecturer', () => {
    const members: Member[] = [
      { ...ada, role: ModuleRole.Student, ...OPEN },
      { ...bob, role: ModuleRole.Lecturer, ...OPEN },
      { ...cy, role: ModuleRole.Tutor, ...OPEN },
      { ...dee, role: ModuleRole.Student, ...OPEN },
    ];
    const asLecturer = plan([['ada', 'Student']], {
      viewer: LECTURER,
      members,
      mode: 'sync',
      maxRemovals: 5,
    });
    expect(asLecturer.result.removed).toEqual([
      { user_id: 3, username: 'cy', role: ModuleRole.Tutor },
      { user_id: 4, username: 'dee', role: ModuleRole.Student },
    ]);
    expect(asLecturer.result.exceeds_limit).toBe(false);
    const asAdmin = plan([['ada', 'Student']], { members, mode: 'sync', maxRemovals: 5 });
    expect(asAdmin.result.removed.map((member) => member.user_id)).toEqual([2, 3, 4]);
    // In add mode nobody is removed.
    expect(plan([['ada', 'Student']], { members, maxRemovals: 0 }).result).toMatchObject({
      removed: [],
      exceeds_limit: false,
    });
  });

  it('keeps a member named on a row that fails from the removals', () => {
    const members: Member[] = [{ ...ada, role: ModuleRole.Student, ...OPEN }];
    const { result } = plan([['ada', 'Dean']], { members, mode: 'sync' });
    expect(result.removed).toEqual([]);
  });

  it('flags a sync that removes more than allowed: the given limit, else a tenth of the removable members', () => {
    const many: Member[] = Array.from({ length: 25 }, (_, i) => ({
      id: 100 + i,
      username: `member${i}`,
      role: ModuleRole.Student,
      ...OPEN,
    }));
    const users = new Map([
      ...USERS,
      ...many.map((member): [string, KnownUser] => [member.username, member]),
    ]);
    const sync = (listed: number, maxRemovals?: number) =>
      planRosterImport({
        rows: rows(...many.slice(0, listed).map((member): [string, string] => [member.username, 'Student'])),
        users,
        members: many,
        viewer: ADMIN,
        mode: 'sync',
        onRemove: 'delete',
        columns: new Set(),
        maxRemovals,
        dryRun: true,
      });
    // 25 removable members: the default limit is 2.
    expect(sync(23)).toMatchObject({ limit: 2, result: { exceeds_limit: false, dry_run: true } });
    expect(sync(22)).toMatchObject({ limit: 2, result: { exceeds_limit: true } });
    expect(sync(22).result.removed).toHaveLength(3);
    expect(sync(22, 3)).toMatchObject({ limit: 3, result: { exceeds_limit: false } });
    expect(sync(25, 0)).toMatchObject({ limit: 0, result: { exceeds_limit: false, removed: [] } });
  });
});

describe(userKey.name, () => {
  it('trims and lower-cases a user cell', () => {
    expect(userKey('  Ada@Example.EDU\t')).toBe('ada@example.edu');
  });
});
