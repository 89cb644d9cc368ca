import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import { ONEROSTER_HEADERS, CANVAS_HEADERS, MANIFEST_FILES } from '../src/exports/lms-files.js';
import { useTestApp } from './support/app.js';
import { auditEvents } from './support/csv.js';
import { assignRole, makeModule, makeUser, tokenFor, type UserRow } from './support/factories.js';
import { download, readExport, readZip, type ZipCsv } from './support/lms-zip.js';
import { makeIntegrationToken } from './support/token-fixtures.js';

/**
 * The LMS roster exports (docs/api.md §16), read the way the platforms read them: the zip by yauzl, each CSV by
 * csv-parse with no relaxation. The service runs with a year starting on 1 September and a Canvas sub-account.
 */
const SETTINGS = {
  lmsExport: {
    idPrefix: 'mas-',
    orgName: 'Test University',
    yearStart: { month: 9, day: 1 },
    canvasAccountId: 'sub-7',
  },
};
const ONEROSTER = '/api/exports/oneroster-1.1.zip';
const CANVAS = '/api/exports/canvas-sis.zip';
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('LMS roster exports (docs/api.md §16)', () => {
  const { app, api } = useTestApp(SETTINGS);
  let admin: UserRow;
  let adminToken: string;
  const ds = () => app.dataSource;

  /** A user with the §14 fields set straight in the database. */
  async function person(fields: Record<string, unknown> = {}): Promise<UserRow> {
    const user = await makeUser(ds());
    const names = Object.keys(fields);
    if (names.length > 0)
      await ds().query(
        `UPDATE users SET ${names.map((name, i) => `${name} = $${i + 2}`).join(', ')} WHERE id = $1`,
        [user.id, ...Object.values(fields)],
      );
    return user;
  }

  async function member(user: UserRow, moduleId: number, role: ModuleRole, lifecycle = '') {
    await assignRole(ds(), user.id, moduleId, role);
    if (lifecycle)
      await ds().query(`UPDATE user_module_roles SET ${lifecycle} WHERE user_id = $1 AND module_id = $2`, [
        user.id,
        moduleId,
      ]);
  }

  const get = (path: string, token = adminToken) => download(`${app.url}${path}`, token);

  async function exported(path: string, token = adminToken): Promise<Map<string, ZipCsv>> {
    const answer = await get(path, token);
    expect(answer.status).toBe(200);
    return readExport(answer.body);
  }

  /** The year 2026 with every kind of member; 2025 has a module that must not show up. */
  let year: {
    intro: { id: number };
    plain: { id: number };
    odd: { id: number };
    lecturer: UserRow;
    assistant: UserRow;
    tutor: UserRow;
    student: UserRow;
    suspended: UserRow;
    upcoming: UserRow;
    concluded: UserRow;
    ended: UserRow;
    dropped: UserRow;
  };

  beforeEach(async () => {
    await app.reset();
    admin = await makeUser(ds(), { admin: true });
    adminToken = tokenFor(admin);
    const intro = await makeModule(ds(), {
      code: 'CSC101',
      year: 2026,
      description: 'Intro\r\nto "CS", part 1',
    });
    const plain = await makeModule(ds(), { code: 'CSC102', year: 2026, description: null });
    const odd = await makeModule(ds(), { code: 'MA_1 ü', year: 2026, description: '' });
    const other = await makeModule(ds(), { code: 'OLD100', year: 2025 });
    const lecturer = await person({ given_name: 'Grace', family_name: 'Hopper', external_id: 'gh-1' });
    const assistant = await person({ display_name: 'Ada Lovelace King', external_id: 'ada@uni.edu' });
    const tutor = await person({ display_name: 'Plato', external_id: 'p.2' });
    const student = await person({ external_id: 'S-0001' });
    const suspended = await person({
      active: false,
      given_name: 'Sus',
      family_name: 'Pended',
      external_id: 'S-2',
    });
    const upcoming = await person({ external_id: 'S-3' });
    const concluded = await person({ external_id: 'S-4' });
    const ended = await person({ external_id: 'S-5' });
    const dropped = await person({ external_id: 'S-6' });
    await member(lecturer, intro.id, ModuleRole.Lecturer, `starts_at = '2025-09-14T08:00:00.250Z'`);
    await member(lecturer, plain.id, ModuleRole.Lecturer);
    await member(assistant, intro.id, ModuleRole.AssistantLecturer);
    await member(tutor, intro.id, ModuleRole.Tutor);
    await member(tutor, plain.id, ModuleRole.Student);
    await member(student, intro.id, ModuleRole.Student);
    await member(suspended, intro.id, ModuleRole.Student);
    await member(upcoming, intro.id, ModuleRole.Student, `starts_at = now() + interval '30 days'`);
    await member(concluded, intro.id, ModuleRole.Student, `status = 'completed'`);
    await member(
      ended,
      intro.id,
      ModuleRole.Student,
      `starts_at = now() - interval '60 days', ends_at = now() - interval '1 day'`,
    );
    await member(dropped, intro.id, ModuleRole.Student, `status = 'inactive'`);
    await member(student, other.id, ModuleRole.Student);
    year = {
      intro,
      plain,
      odd,
      lecturer,
      assistant,
      tutor,
      student,
      suspended,
      upcoming,
      concluded,
      ended,
      dropped,
    };
  });

  const byId = (file: ZipCsv, column: string) => new Map(file.rows.map((row) => [row[column], row]));

  describe('OneRoster 1.1 CSV', () => {
    it('answers a zip of the seven files at its root, DEFLATE, each with its header verbatim', async () => {
      const answer = await get(`${ONEROSTER}?year=2026`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('application/zip');
      expect(answer.headers.get('content-disposition')).toBe('attachment; filename="oneroster-1.1-2026.zip"');
      const files = await readExport(answer.body);
      expect([...files.keys()]).toEqual(Object.keys(ONEROSTER_HEADERS));
      for (const [name, file] of files) {
        expect(file.compressionMethod).toBe(8);
        expect(file.header).toEqual(ONEROSTER_HEADERS[name as keyof typeof ONEROSTER_HEADERS]);
        // No header-only file, and no spreadsheet guard (§9's ' prefix) anywhere.
        expect(file.records.length).toBeGreaterThan(0);
        expect(file.bytes.toString()).not.toMatch(/(^|,)'/m);
      }
    });

    it('declares each file bulk or absent in the manifest, in its order', async () => {
      const manifest = (await exported(`${ONEROSTER}?year=2026`)).get('manifest.csv')!;
      const present = ['academicSessions', 'classes', 'courses', 'enrollments', 'orgs', 'users'];
      expect(manifest.records).toEqual([
        ['manifest.version', '1.0'],
        ['oneroster.version', '1.1'],
        ...MANIFEST_FILES.map((file) => [`file.${file}`, present.includes(file) ? 'bulk' : 'absent']),
        ['source.systemName', 'Module Administration Service'],
      ]);
    });

    it('writes the org, the session from EXPORT_YEAR_START, one course and class per module', async () => {
      const files = await exported(`${ONEROSTER}?year=2026`);
      expect(files.get('orgs.csv')!.records).toEqual([
        ['mas-org', '', '', 'Test University', 'school', '', ''],
      ]);
      expect(files.get('academicSessions.csv')!.records).toEqual([
        ['mas-term-2026', '', '', '2026', 'term', '2026-09-01', '2027-08-31', '', '2027'],
      ]);
      expect(files.get('courses.csv')!.records).toEqual([
        ['mas-course-CSC101', '', '', 'mas-term-2026', 'CSC101', 'CSC101', '', 'mas-org', '', ''],
        ['mas-course-CSC102', '', '', 'mas-term-2026', 'CSC102', 'CSC102', '', 'mas-org', '', ''],
        ['mas-course-MA_5F1_20_C3_BC', '', '', 'mas-term-2026', 'MA_1 ü', 'MA_1 ü', '', 'mas-org', '', ''],
      ]);
      const { intro, plain, odd } = year;
      const klass = (id: number, title: string, course: string, code: string) => [
        `mas-class-${id}`,
        '',
        '',
        title,
        '',
        course,
        code,
        'scheduled',
        '',
        'mas-org',
        'mas-term-2026',
        '',
        '',
        '',
      ];
      expect(files.get('classes.csv')!.records).toEqual([
        klass(intro.id, 'CSC101 Intro to "CS", part 1', 'mas-course-CSC101', 'CSC101-2026'),
        klass(plain.id, 'CSC102', 'mas-course-CSC102', 'CSC102-2026'),
        klass(odd.id, 'MA_1 ü', 'mas-course-MA_5F1_20_C3_BC', 'MA_1 ü-2026'),
      ]);
      // The CR LF of the description became one space; the quotes are RFC 4180's.
      expect(files.get('classes.csv')!.bytes.toString()).toContain('"CSC101 Intro to ""CS"", part 1"');
    });

    it('exports active, upcoming and completed memberships by default, with roles, primary and dates', async () => {
      const files = await exported(`${ONEROSTER}?year=2026`);
      const { intro, plain, lecturer, assistant, tutor, student, suspended, upcoming, concluded, ended } =
        year;
      const enrolments = byId(files.get('enrollments.csv')!, 'sourcedId');
      const expected = [
        [intro.id, lecturer, 'teacher', 'true'],
        [plain.id, lecturer, 'teacher', 'true'],
        [intro.id, assistant, 'teacher', 'false'],
        [intro.id, tutor, 'teacher', 'false'],
        [plain.id, tutor, 'student', ''],
        [intro.id, student, 'student', ''],
        [intro.id, suspended, 'student', ''],
        [intro.id, upcoming, 'student', ''],
        [intro.id, concluded, 'student', ''],
        [intro.id, ended, 'student', ''],
      ] as const;
      expect(enrolments.size).toBe(expected.length);
      for (const [moduleId, user, role, primary] of expected)
        expect(enrolments.get(`mas-enr-${moduleId}-${user.id}`)).toMatchObject({
          status: '',
          dateLastModified: '',
          classSourcedId: `mas-class-${moduleId}`,
          schoolSourcedId: 'mas-org',
          userSourcedId: `mas-user-${user.id}`,
          role,
          primary,
        });
      // Rows come by class, then user: a fixed order.
      const ids = files.get('enrollments.csv')!.rows.map((row) => row.sourcedId);
      const key = (id: string) => id.split('-').slice(2).map(Number);
      expect([...ids].sort((a, b) => key(a)[0] - key(b)[0] || key(a)[1] - key(b)[1])).toEqual(ids);
      const at = async (user: UserRow, column: string) =>
        (
          await ds().query(
            `SELECT ${column} AS at FROM user_module_roles WHERE user_id = $1 AND module_id = $2`,
            [user.id, intro.id],
          )
        )[0].at as Date;
      const day = (date: Date) => date.toISOString().slice(0, 10);
      const row = (user: UserRow) => enrolments.get(`mas-enr-${intro.id}-${user.id}`)!;
      expect(row(lecturer)).toMatchObject({ beginDate: '2025-09-14', endDate: '' });
      expect(row(upcoming)).toMatchObject({ beginDate: day(await at(upcoming, 'starts_at')), endDate: '' });
      expect(row(ended)).toMatchObject({ endDate: day(await at(ended, 'ends_at')) });
      // Completed without ends_at: the day its status was set.
      expect(row(concluded)).toMatchObject({
        beginDate: '',
        endDate: day(await at(concluded, 'status_set_at')),
      });
      for (const enrolment of enrolments.values()) {
        for (const column of ['beginDate', 'endDate'])
          expect(enrolment[column]).toMatch(/^(\d{4}-\d{2}-\d{2})?$/);
      }
    });

    it('writes every exported user once, disabled when inactive, with names made up where missing', async () => {
      const files = await exported(`${ONEROSTER}?year=2026`);
      const users = byId(files.get('users.csv')!, 'sourcedId');
      const { lecturer, assistant, tutor, student, suspended, dropped } = year;
      expect(users.size).toBe(8);
      expect(users.has(`mas-user-${dropped.id}`)).toBe(false);
      const blank = {
        status: '',
        dateLastModified: '',
        userIds: '',
        middleName: '',
        sms: '',
        phone: '',
        agentSourcedIds: '',
        grades: '',
        password: '',
      };
      expect(users.get(`mas-user-${lecturer.id}`)).toEqual({
        ...blank,
        sourcedId: `mas-user-${lecturer.id}`,
        enabledUser: 'true',
        orgSourcedIds: 'mas-org',
        role: 'teacher',
        username: lecturer.username,
        givenName: 'Grace',
        familyName: 'Hopper',
        identifier: lecturer.username,
        email: lecturer.email,
      });
      expect(users.get(`mas-user-${assistant.id}`)).toMatchObject({
        givenName: 'Ada',
        familyName: 'Lovelace King',
        role: 'teacher',
      });
      expect(users.get(`mas-user-${tutor.id}`)).toMatchObject({
        givenName: 'Plato',
        familyName: tutor.username,
        role: 'teacher',
      });
      expect(users.get(`mas-user-${student.id}`)).toMatchObject({
        givenName: student.username,
        familyName: student.username,
        role: 'student',
      });
      expect(users.get(`mas-user-${suspended.id}`)).toMatchObject({ enabledUser: 'false', role: 'student' });
    });

    it('holds every reference: enrolment → class, user, org; class → course, term; user → org', async () => {
      const files = await exported(`${ONEROSTER}?year=2026`);
      const ids = (name: string) => new Set(files.get(name)!.rows.map((row) => row.sourcedId));
      const [orgs, terms, courses, classes, users] = [
        'orgs.csv',
        'academicSessions.csv',
        'courses.csv',
        'classes.csv',
        'users.csv',
      ].map(ids);
      for (const row of files.get('enrollments.csv')!.rows) {
        expect(
          classes.has(row.classSourcedId) && users.has(row.userSourcedId) && orgs.has(row.schoolSourcedId),
        ).toBe(true);
        expect(['teacher', 'student']).toContain(row.role);
        expect(['true', 'false', '']).toContain(row.primary);
      }
      for (const row of files.get('classes.csv')!.rows)
        expect(
          courses.has(row.courseSourcedId) && terms.has(row.termSourcedIds) && orgs.has(row.schoolSourcedId),
        ).toBe(true);
      for (const row of files.get('courses.csv')!.rows)
        expect(terms.has(row.schoolYearSourcedId) && orgs.has(row.orgSourcedId)).toBe(true);
      for (const row of files.get('users.csv')!.rows) {
        expect(orgs.has(row.orgSourcedIds)).toBe(true);
        expect(['true', 'false']).toContain(row.enabledUser);
      }
      for (const row of files.get('academicSessions.csv')!.rows)
        expect([row.startDate, row.endDate]).toEqual([
          expect.stringMatching(DAY),
          expect.stringMatching(DAY),
        ]);
    });

    it('takes include: only completed beside active', async () => {
      const files = await exported(`${ONEROSTER}?year=2026&include=completed`);
      const users = files.get('users.csv')!.rows.map((row) => row.sourcedId);
      expect(users).not.toContain(`mas-user-${year.upcoming.id}`);
      expect(users).toContain(`mas-user-${year.concluded.id}`);
    });

    it('leaves users and enrollments out, declared absent, for a year whose modules have no exported member', async () => {
      await makeModule(ds(), { code: 'NEW100', year: 2030 });
      const files = await exported(`${ONEROSTER}?year=2030`);
      expect([...files.keys()]).toEqual([
        'manifest.csv',
        'orgs.csv',
        'academicSessions.csv',
        'courses.csv',
        'classes.csv',
      ]);
      const manifest = new Map(files.get('manifest.csv')!.records.map(([name, value]) => [name, value]));
      expect([manifest.get('file.users'), manifest.get('file.enrollments')]).toEqual(['absent', 'absent']);
      const canvas = await exported(`${CANVAS}?year=2030`);
      expect([...canvas.keys()]).toEqual(['terms.csv', 'courses.csv']);
    });
  });

  describe('Canvas SIS CSV', () => {
    it('answers users, terms, courses and enrollments with their headers and values', async () => {
      const answer = await get(`${CANVAS}?year=2026`);
      expect(answer.headers.get('content-disposition')).toBe('attachment; filename="canvas-sis-2026.zip"');
      const files = await readExport(answer.body);
      expect([...files.keys()]).toEqual(Object.keys(CANVAS_HEADERS));
      for (const [name, file] of files)
        expect(file.header).toEqual(CANVAS_HEADERS[name as keyof typeof CANVAS_HEADERS]);
      expect(files.get('terms.csv')!.records).toEqual([
        ['mas-term-2026', '2026', 'active', '2026-09-01T00:00:00Z', '2027-09-01T00:00:00Z'],
      ]);
      const {
        intro,
        plain,
        odd,
        lecturer,
        assistant,
        tutor,
        suspended,
        upcoming,
        concluded,
        ended,
        dropped,
      } = year;
      expect(files.get('courses.csv')!.records).toEqual([
        [
          `mas-class-${intro.id}`,
          'CSC101-2026',
          'CSC101 Intro to "CS", part 1',
          'sub-7',
          'mas-term-2026',
          'active',
        ],
        [`mas-class-${plain.id}`, 'CSC102-2026', 'CSC102', 'sub-7', 'mas-term-2026', 'active'],
        [`mas-class-${odd.id}`, 'MA_1 ü-2026', 'MA_1 ü', 'sub-7', 'mas-term-2026', 'active'],
      ]);
      const users = byId(files.get('users.csv')!, 'user_id');
      expect(users.get(`mas-user-${assistant.id}`)).toEqual({
        user_id: `mas-user-${assistant.id}`,
        integration_id: 'ada@uni.edu',
        login_id: assistant.username,
        first_name: 'Ada',
        last_name: 'Lovelace King',
        full_name: 'Ada Lovelace King',
        email: assistant.email,
        status: 'active',
      });
      expect(users.get(`mas-user-${lecturer.id}`)).toMatchObject({ full_name: 'Grace Hopper' });
      expect(users.get(`mas-user-${suspended.id}`)).toMatchObject({ status: 'suspended' });
      expect(users.get(`mas-user-${admin.id}`)).toBeUndefined();
      const enrolments = new Map(
        files.get('enrollments.csv')!.rows.map((row) => [`${row.course_id} ${row.user_id}`, row]),
      );
      const row = (user: UserRow, moduleId = intro.id) =>
        enrolments.get(`mas-class-${moduleId} mas-user-${user.id}`)!;
      expect(enrolments.size).toBe(11);
      expect(row(lecturer)).toEqual({
        course_id: `mas-class-${intro.id}`,
        user_id: `mas-user-${lecturer.id}`,
        role: 'teacher',
        status: 'active',
        start_date: '2025-09-14T08:00:00.250Z',
        end_date: '',
      });
      expect([row(assistant).role, row(tutor).role, row(tutor, plain.id).role]).toEqual([
        'teacher',
        'ta',
        'student',
      ]);
      expect([row(upcoming).status, row(concluded).status, row(ended).status, row(dropped).status]).toEqual([
        'active',
        'completed',
        'completed',
        'inactive',
      ]);
      expect(row(upcoming).start_date).toMatch(INSTANT_MS);
      const [{ at }] = await ds().query(
        `SELECT status_set_at AS at FROM user_module_roles WHERE user_id = $1 AND module_id = $2`,
        [concluded.id, intro.id],
      );
      expect(row(concluded).end_date).toBe((at as Date).toISOString());
      for (const enrolment of enrolments.values()) {
        expect(users.has(enrolment.user_id)).toBe(true);
        for (const column of ['start_date', 'end_date'])
          expect(enrolment[column]).toMatch(new RegExp(`^(${INSTANT_MS.source.slice(1, -1)})?$`));
      }
    });

    it('takes include: inactive left out when not named', async () => {
      const files = await exported(`${CANVAS}?year=2026&include=upcoming,completed`);
      expect(files.get('enrollments.csv')!.rows.map((row) => row.status)).not.toContain('inactive');
    });
  });

  describe('user_key=external_id', () => {
    it('names every user the external_id ids of the users without a usable one, at most 20', async () => {
      for (const path of [ONEROSTER, CANVAS]) {
        const res = await api.get(`${path}?year=2026&user_key=external_id`, { token: adminToken });
        expect(res.status).toBe(200);
      }
      const bad = [await person({ external_id: 'has space' }), await person()];
      for (const user of bad) await member(user, year.plain.id, ModuleRole.Student);
      const res = await api.get(`${ONEROSTER}?year=2026&user_key=external_id&preview=true`, {
        token: adminToken,
      });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        success: false,
        data: null,
        message: `Users without a usable external_id: ${bad[0].id}, ${bad[1].id}`,
      });
      const many: UserRow[] = [];
      for (let i = 0; i < 21; i++) many.push(await person());
      for (const user of many) await member(user, year.odd.id, ModuleRole.Student);
      const all = [...bad, ...many].map((user) => user.id).sort((a, b) => a - b);
      const more = await api.get(`${CANVAS}?year=2026&user_key=external_id`, { token: adminToken });
      expect(more.status).toBe(422);
      expect(more.body.message).toBe(`Users without a usable external_id: ${all.slice(0, 20).join(', ')}, …`);
    });

    it('writes the external_id as the user id, and the own id as Canvas integration_id', async () => {
      const files = await exported(`${CANVAS}?year=2026&user_key=external_id`);
      const users = byId(files.get('users.csv')!, 'user_id');
      expect(users.get('ada@uni.edu')).toMatchObject({ integration_id: `mas-user-${year.assistant.id}` });
      expect(new Set(files.get('enrollments.csv')!.rows.map((row) => row.user_id))).toEqual(
        new Set(users.keys()),
      );
      const oneRoster = await exported(`${ONEROSTER}?year=2026&user_key=external_id`);
      expect(oneRoster.get('users.csv')!.rows.map((row) => row.sourcedId)).toContain('gh-1');
      expect(oneRoster.get('enrollments.csv')!.rows.map((row) => row.userSourcedId)).toContain('S-0001');
    });
  });

  it('gives the same files for two exports of an unchanged year', async () => {
    for (const path of [`${ONEROSTER}?year=2026`, `${CANVAS}?year=2026`]) {
      const [first, second] = [await get(path), await get(path)];
      const files = async (zip: Buffer) =>
        (await readZip(zip)).map((entry) => [entry.name, entry.bytes.toString('hex')]);
      expect(await files(first.body)).toEqual(await files(second.body));
      expect(first.body.length).toBe(second.body.length);
    }
  });

  it.each([
    ['', 'year must be an integer'],
    ['year=20x6', 'year must be an integer'],
    ['year=2026&user_key=username', 'user_key must be one of id, external_id'],
    ['year=2026&include=', 'include must be a comma-separated list of: upcoming,completed'],
    ['year=2026&include=active', 'include must be a comma-separated list of: upcoming,completed'],
    ['year=2026&include=inactive', 'include must be a comma-separated list of: upcoming,completed'],
    [
      'year=2026&include=completed,completed',
      'include must be a comma-separated list of: upcoming,completed',
    ],
    ['year=2026&preview=yes', 'preview must be true or false'],
    ['year=2026&max_drop=101', 'max_drop must be an integer between 0 and 100'],
    ['year=2026&max_drop=-1', 'max_drop must be an integer between 0 and 100'],
    ['year=2026&max_drop=5.0', 'max_drop must be an integer between 0 and 100'],
    [
      'user_key=x&preview=x',
      'year must be an integer; user_key must be one of id, external_id; preview must be true or false',
    ],
  ])('answers 400 to %s', async (query, message) => {
    const res = await api.get(`${ONEROSTER}?${query}`, { token: adminToken });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, data: null, message });
  });

  it("answers 400 with Canvas's own include values, and 422 for a year without modules", async () => {
    const res = await api.get(`${CANVAS}?year=2026&include=archived`, { token: adminToken });
    expect(res.body.message).toBe('include must be a comma-separated list of: upcoming,completed,inactive');
    for (const path of [ONEROSTER, CANVAS]) {
      const none = await api.get(`${path}?year=2040&preview=true`, { token: adminToken });
      expect(none.status).toBe(422);
      expect(none.body).toEqual({
        success: false,
        data: null,
        message: 'Nothing to export: year 2040 has no modules',
      });
    }
  });

  describe('preview, max_drop and the audit trail', () => {
    const preview = (path: string, query = '') =>
      api.get(`${path}?year=2026&preview=true${query}`, { token: adminToken });

    it('previews without writing anything, then remembers each export for the drop', async () => {
      const res = await preview(ONEROSTER);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'Export checked',
        data: {
          profile: 'oneroster-1.1',
          year: 2026,
          files: {
            'orgs.csv': 1,
            'academicSessions.csv': 1,
            'courses.csv': 3,
            'classes.csv': 3,
            'users.csv': 8,
            'enrollments.csv': 10,
          },
          synthesized_names: 6,
          enrollments: 10,
          previous_enrollments: null,
          drop_percent: 0,
        },
      });
      expect((await preview(CANVAS)).body.data.files).toEqual({
        'users.csv': 9,
        'terms.csv': 1,
        'courses.csv': 3,
        'enrollments.csv': 11,
      });
      expect(await auditEvents(ds(), 'export.lms')).toEqual([]);
      expect(await ds().query('SELECT * FROM lms_exports')).toEqual([]);

      expect((await get(`${ONEROSTER}?year=2026`)).status).toBe(200);
      await ds().query(`DELETE FROM user_module_roles WHERE module_id = $1 AND role = 'Student'`, [
        year.intro.id,
      ]);
      const after = await preview(ONEROSTER, '&max_drop=10');
      expect(after.body.data).toMatchObject({ enrollments: 5, previous_enrollments: 10, drop_percent: 50 });
      const refused = await api.get(`${ONEROSTER}?year=2026&max_drop=49`, { token: adminToken });
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({
        success: false,
        data: null,
        message: 'Export would drop 5 of 10 enrollments; the limit is 49%',
      });
      // Canvas keeps its own memory; a refused export is not remembered.
      expect((await preview(CANVAS)).body.data.previous_enrollments).toBeNull();
      expect((await get(`${ONEROSTER}?year=2026&max_drop=50`)).status).toBe(200);
      expect((await preview(ONEROSTER)).body.data).toMatchObject({
        previous_enrollments: 5,
        drop_percent: 0,
      });
    });

    it('audits each export: the admin as actor, or the token in the summary', async () => {
      await get(`${ONEROSTER}?year=2026&user_key=external_id`);
      const token = await makeIntegrationToken(ds(), ['exports']);
      expect((await get(`${CANVAS}?year=2026&include=completed`, token.token)).status).toBe(200);
      const events = await auditEvents(ds(), 'export.lms');
      expect(events).toEqual([
        expect.objectContaining({
          actor_id: Number(admin.id),
          target_type: null,
          target_ids: [],
          summary: {
            profile: 'oneroster-1.1',
            year: 2026,
            user_key: 'external_id',
            files: {
              'orgs.csv': 1,
              'academicSessions.csv': 1,
              'courses.csv': 3,
              'classes.csv': 3,
              'users.csv': 8,
              'enrollments.csv': 10,
            },
          },
        }),
        expect.objectContaining({
          actor_id: null,
          summary: {
            profile: 'canvas-sis',
            year: 2026,
            user_key: 'id',
            files: { 'users.csv': 7, 'terms.csv': 1, 'courses.csv': 3, 'enrollments.csv': 9 },
            token_id: token.id,
          },
        }),
      ]);
      const listed = await api.get('/api/audit?action=export.lms', { token: adminToken });
      expect(listed.body.data.total).toBe(2);
    });
  });

  describe('who may export', () => {
    it('lets an exports token through on both routes, and nowhere else', async () => {
      const { token } = await makeIntegrationToken(ds(), ['exports']);
      for (const path of [ONEROSTER, CANVAS])
        expect((await get(`${path}?year=2026`, token)).status).toBe(200);
      const elsewhere = await api.get('/api/users', { token });
      expect(elsewhere.status).toBe(401);
      expect(elsewhere.body.message).toBe('Invalid or expired token');
      expect((await api.get('/api/events', { token })).status).toBe(401);
    });

    it('refuses events and scim tokens (401), users who are not admins (403) and callers without a token', async () => {
      for (const scopes of [['events'], ['scim'], ['scim', 'events']]) {
        const { token } = await makeIntegrationToken(ds(), scopes);
        const res = await api.get(`${ONEROSTER}?year=2026`, { token });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ success: false, data: null, message: 'Invalid or expired token' });
      }
      const res = await api.get(`${CANVAS}?year=2026`, { token: tokenFor(year.lecturer) });
      expect(res.body).toEqual({
        success: false,
        data: null,
        message: 'You do not have permission to perform this action',
      });
      expect((await api.get(`${CANVAS}?year=2026`)).status).toBe(401);
    });

    it('creates a token with the exports scope', async () => {
      const res = await api.post('/api/tokens', {
        token: adminToken,
        body: { name: 'LMS nightly', scopes: ['exports'] },
      });
      expect(res.status).toBe(201);
      expect(res.body.data.scopes).toEqual(['exports']);
    });
  });
});
