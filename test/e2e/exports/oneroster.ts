// Part of test/exports.e2e-spec.ts: the OneRoster 1.1 files.
import { MANIFEST_FILES, ONEROSTER_HEADERS } from '../../../src/exports/lms-files.js';
import { makeModule, type UserRow } from '../../support/factories.js';
import { readExport } from '../../support/lms-zip.js';
import { CANVAS, DAY, type ExportsContext, ONEROSTER } from './context.js';

export function oneRosterFiles(ctx: ExportsContext): void {
  const { given, get, exported, byId, ds } = ctx;

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
      const { intro, plain, odd } = given.year;
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
        given.year;
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
      const { lecturer, assistant, tutor, student, suspended, dropped } = given.year;
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
      expect(users).not.toContain(`mas-user-${given.year.upcoming.id}`);
      expect(users).toContain(`mas-user-${given.year.concluded.id}`);
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
}
