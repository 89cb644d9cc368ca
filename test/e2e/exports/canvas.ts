// Part of test/exports.e2e-spec.ts: the Canvas SIS files.
import { CANVAS_HEADERS } from '../../../src/exports/lms-files.js';
import { type UserRow } from '../../support/factories.js';
import { readExport } from '../../support/lms-zip.js';
import { CANVAS, type ExportsContext, INSTANT_MS } from './context.js';

export function canvasFiles(ctx: ExportsContext): void {
  const { given, get, exported, byId, ds } = ctx;

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
      } = given.year;
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
      expect(users.get(`mas-user-${given.admin.id}`)).toBeUndefined();
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
}
