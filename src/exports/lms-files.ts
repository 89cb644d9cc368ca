import { type LmsExportSettings } from '../config/app-config.js';
import { ModuleRole } from '../course-modules/modules/module-role.js';
import { type EffectiveStatus } from '../course-modules/modules/effective-status.js';

/**
 * The files of the LMS roster exports (docs/api.md §16) as pure functions: identifiers, names, and one CSV
 * record (an array of cells, in header order) per stored row. The service streams the rows; nothing here
 * touches the database or the zip.
 */

export type Profile = 'oneroster-1.1' | 'canvas-sis';
export type UserKey = 'id' | 'external_id';

/** The effective statuses each profile may export beside `active`, and its default (all of them). */
export const INCLUDABLE: Readonly<Record<Profile, readonly EffectiveStatus[]>> = {
  'oneroster-1.1': ['upcoming', 'completed'],
  'canvas-sis': ['upcoming', 'completed', 'inactive'],
};

/** OneRoster 1.1 CSV headers, verbatim (names, order and case). */
export const ONEROSTER_HEADERS = {
  'manifest.csv': ['propertyName', 'value'],
  'orgs.csv': ['sourcedId', 'status', 'dateLastModified', 'name', 'type', 'identifier', 'parentSourcedId'],
  'academicSessions.csv': [
    'sourcedId',
    'status',
    'dateLastModified',
    'title',
    'type',
    'startDate',
    'endDate',
    'parentSourcedId',
    'schoolYear',
  ],
  'courses.csv': [
    'sourcedId',
    'status',
    'dateLastModified',
    'schoolYearSourcedId',
    'title',
    'courseCode',
    'grades',
    'orgSourcedId',
    'subjects',
    'subjectCodes',
  ],
  'classes.csv': [
    'sourcedId',
    'status',
    'dateLastModified',
    'title',
    'grades',
    'courseSourcedId',
    'classCode',
    'classType',
    'location',
    'schoolSourcedId',
    'termSourcedIds',
    'subjects',
    'subjectCodes',
    'periods',
  ],
  'users.csv': [
    'sourcedId',
    'status',
    'dateLastModified',
    'enabledUser',
    'orgSourcedIds',
    'role',
    'username',
    'userIds',
    'givenName',
    'familyName',
    'middleName',
    'identifier',
    'email',
    'sms',
    'phone',
    'agentSourcedIds',
    'grades',
    'password',
  ],
  'enrollments.csv': [
    'sourcedId',
    'status',
    'dateLastModified',
    'classSourcedId',
    'schoolSourcedId',
    'userSourcedId',
    'role',
    'primary',
    'beginDate',
    'endDate',
  ],
} as const;

/** Canvas SIS Import CSV headers, verbatim. */
export const CANVAS_HEADERS = {
  'users.csv': [
    'user_id',
    'integration_id',
    'login_id',
    'first_name',
    'last_name',
    'full_name',
    'email',
    'status',
  ],
  'terms.csv': ['term_id', 'name', 'status', 'start_date', 'end_date'],
  'courses.csv': ['course_id', 'short_name', 'long_name', 'account_id', 'term_id', 'status'],
  'enrollments.csv': ['course_id', 'user_id', 'role', 'status', 'start_date', 'end_date'],
} as const;

/** The files OneRoster's manifest declares, in its order, by the name it gives them. */
export const MANIFEST_FILES = [
  'academicSessions',
  'categories',
  'classes',
  'classResources',
  'courses',
  'courseResources',
  'demographics',
  'enrollments',
  'lineItems',
  'orgs',
  'resources',
  'results',
  'users',
] as const;

export const SYSTEM_NAME = 'Module Administration Service';

/** A module as the exports read it. */
export interface ClassRow {
  id: number;
  code: string;
  description: string | null;
}

/** A user holding an exported membership; `teaches`: one of those is a Lecturer, AssistantLecturer or Tutor one. */
export interface UserRow {
  id: number;
  username: string;
  email: string;
  given_name: string | null;
  family_name: string | null;
  display_name: string | null;
  external_id: string | null;
  active: boolean;
  teaches: boolean;
}

/** An exported membership, with its user's `external_id` for `user_key=external_id`. */
export interface EnrolmentRow {
  module_id: number;
  user_id: number;
  role: ModuleRole;
  effective_status: EffectiveStatus;
  starts_at: Date | null;
  ends_at: Date | null;
  status_set_at: Date;
  external_id: string | null;
}

/** A CR, LF or CRLF inside a value becomes one space: a consumer reads one record per line. */
export const oneLine = (value: string): string => value.replace(/\r\n|[\r\n]/g, ' ');

/** A module code as an identifier: a character outside `[A-Za-z0-9.-]` as `_` and two hex digits per UTF-8 byte. */
export function escapeCode(code: string): string {
  let escaped = '';
  for (const character of code) {
    if (/^[A-Za-z0-9.-]$/.test(character)) escaped += character;
    else
      for (const byte of Buffer.from(character, 'utf8'))
        escaped += `_${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return escaped;
}

/** The identifiers of one export (`EXPORT_ID_PREFIX` + kind), stable across exports. */
export class Identifiers {
  constructor(
    private readonly prefix: string,
    private readonly userKey: UserKey,
  ) {}

  get org(): string {
    return `${this.prefix}org`;
  }
  term(year: number): string {
    return `${this.prefix}term-${year}`;
  }
  course(code: string): string {
    return `${this.prefix}course-${escapeCode(code)}`;
  }
  class(moduleId: number): string {
    return `${this.prefix}class-${moduleId}`;
  }
  /** The service's own id of a user, whatever `user_key` says. */
  ownUser(userId: number): string {
    return `${this.prefix}user-${userId}`;
  }
  /** A user's key: their own id, or their `external_id` (the service checked it is usable before streaming). */
  user(userId: number, externalId: string | null): string {
    return this.userKey === 'id' ? this.ownUser(userId) : (externalId ?? '');
  }
  enrolment(moduleId: number, userId: number): string {
    return `${this.prefix}enr-${moduleId}-${userId}`;
  }
}

/** A text that counts: neither null nor empty. */
const filled = (value: string | null): value is string => value !== null && value !== '';

/** Given, family and full name (§16), and whether a given or family name had to be made up. */
export function namesOf(user: Pick<UserRow, 'username' | 'given_name' | 'family_name' | 'display_name'>): {
  given: string;
  family: string;
  full: string;
  synthesized: boolean;
} {
  const display = filled(user.display_name) ? user.display_name : null;
  const space = display?.indexOf(' ') ?? -1;
  const displayGiven = display === null ? null : space < 0 ? display : display.slice(0, space);
  const displayFamily = display === null || space < 0 ? null : display.slice(space + 1);
  const given = filled(user.given_name)
    ? user.given_name
    : filled(displayGiven)
      ? displayGiven
      : user.username;
  const family = filled(user.family_name)
    ? user.family_name
    : filled(displayFamily)
      ? displayFamily
      : user.username;
  return {
    given: oneLine(given),
    family: oneLine(family),
    full: oneLine(display ?? `${given} ${family}`),
    synthesized: !filled(user.given_name) || !filled(user.family_name),
  };
}

/** `YYYY-MM-DD` of a UTC calendar day. */
const isoDay = (at: Date) => at.toISOString().slice(0, 10);

/** The academic session of a year: from its `EXPORT_YEAR_START` to the day before the next year's. */
export interface Session {
  /** First day, `YYYY-MM-DD`. */
  startDate: string;
  /** Last day, `YYYY-MM-DD`. */
  endDate: string;
  /** The year of the last day. */
  schoolYear: number;
  /** The first day, and the day after the last, at 00:00Z (Canvas's term dates). */
  startsAt: string;
  endsAt: string;
}

export function sessionOf(year: number, start: LmsExportSettings['yearStart']): Session {
  // Module years are 1900..9999, where Date.UTC takes the year as it is.
  const first = new Date(Date.UTC(year, start.month - 1, start.day));
  const next = new Date(Date.UTC(year + 1, start.month - 1, start.day));
  const last = new Date(next.getTime() - 86_400_000);
  const startDate = isoDay(first);
  const nextDate = isoDay(next);
  return {
    startDate,
    endDate: isoDay(last),
    schoolYear: last.getUTCFullYear(),
    startsAt: `${startDate}T00:00:00Z`,
    endsAt: `${nextDate}T00:00:00Z`,
  };
}

/** `<code> <description>`, or the code alone when there is no description. */
export const classTitle = (row: ClassRow): string =>
  oneLine(filled(row.description) ? `${row.code} ${row.description}` : row.code);

/** When a membership ends: `ends_at`, or for a `completed` one without it, when its status was set. */
function endOf(row: EnrolmentRow): Date | null {
  if (row.ends_at !== null) return row.ends_at;
  return row.effective_status === 'completed' ? row.status_set_at : null;
}

const isTeaching = (role: ModuleRole) => role !== ModuleRole.Student;

/** The rows of one export, as CSV records of both profiles. */
export class LmsRecords {
  readonly ids: Identifiers;

  constructor(
    private readonly settings: LmsExportSettings,
    readonly year: number,
    userKey: UserKey,
  ) {
    this.ids = new Identifiers(settings.idPrefix, userKey);
  }

  get session(): Session {
    return sessionOf(this.year, this.settings.yearStart);
  }

  /** OneRoster's manifest: `bulk` for each file in the zip, `absent` for the others. */
  manifest(present: ReadonlySet<string>): string[][] {
    return [
      ['manifest.version', '1.0'],
      ['oneroster.version', '1.1'],
      ...MANIFEST_FILES.map((file) => [`file.${file}`, present.has(`${file}.csv`) ? 'bulk' : 'absent']),
      ['source.systemName', SYSTEM_NAME],
    ];
  }

  org(): string[] {
    return [this.ids.org, '', '', oneLine(this.settings.orgName), 'school', '', ''];
  }

  academicSession(): string[] {
    const session = this.session;
    return [
      this.ids.term(this.year),
      '',
      '',
      String(this.year),
      'term',
      session.startDate,
      session.endDate,
      '',
      String(session.schoolYear),
    ];
  }

  course(code: string): string[] {
    const text = oneLine(code);
    return [this.ids.course(code), '', '', this.ids.term(this.year), text, text, '', this.ids.org, '', ''];
  }

  class(row: ClassRow): string[] {
    return [
      this.ids.class(row.id),
      '',
      '',
      classTitle(row),
      '',
      this.ids.course(row.code),
      oneLine(`${row.code}-${this.year}`),
      'scheduled',
      '',
      this.ids.org,
      this.ids.term(this.year),
      '',
      '',
      '',
    ];
  }

  user(row: UserRow): string[] {
    const names = namesOf(row);
    return [
      this.ids.user(row.id, row.external_id),
      '',
      '',
      String(row.active),
      this.ids.org,
      row.teaches ? 'teacher' : 'student',
      row.username,
      '',
      names.given,
      names.family,
      '',
      row.username,
      row.email,
      '',
      '',
      '',
      '',
      '',
    ];
  }

  enrolment(row: EnrolmentRow): string[] {
    const end = endOf(row);
    return [
      this.ids.enrolment(row.module_id, row.user_id),
      '',
      '',
      this.ids.class(row.module_id),
      this.ids.org,
      this.ids.user(row.user_id, row.external_id),
      isTeaching(row.role) ? 'teacher' : 'student',
      row.role === ModuleRole.Lecturer ? 'true' : isTeaching(row.role) ? 'false' : '',
      row.starts_at === null ? '' : isoDay(row.starts_at),
      end === null ? '' : isoDay(end),
    ];
  }

  canvasUser(row: UserRow, userKey: UserKey): string[] {
    const names = namesOf(row);
    const other =
      userKey === 'id'
        ? row.external_id === null
          ? ''
          : oneLine(row.external_id)
        : this.ids.ownUser(row.id);
    return [
      this.ids.user(row.id, row.external_id),
      other,
      row.username,
      names.given,
      names.family,
      names.full,
      row.email,
      row.active ? 'active' : 'suspended',
    ];
  }

  canvasTerm(): string[] {
    const session = this.session;
    return [this.ids.term(this.year), String(this.year), 'active', session.startsAt, session.endsAt];
  }

  canvasCourse(row: ClassRow): string[] {
    return [
      this.ids.class(row.id),
      oneLine(`${row.code}-${this.year}`),
      classTitle(row),
      this.settings.canvasAccountId === undefined ? '' : oneLine(this.settings.canvasAccountId),
      this.ids.term(this.year),
      'active',
    ];
  }

  canvasEnrolment(row: EnrolmentRow): string[] {
    const end = endOf(row);
    return [
      this.ids.class(row.module_id),
      this.ids.user(row.user_id, row.external_id),
      row.role === ModuleRole.Student ? 'student' : row.role === ModuleRole.Tutor ? 'ta' : 'teacher',
      row.effective_status === 'upcoming' ? 'active' : row.effective_status,
      row.starts_at === null ? '' : row.starts_at.toISOString(),
      end === null ? '' : end.toISOString(),
    ];
  }
}
