import { ModuleRole } from '../course-modules/modules/module-role.js';
import { DEFAULT_CONFIG } from '../testing/fakes.js';
import { readExportParams } from './export-params.js';
import { dropPercent } from './exports.service.js';
import { classTitle, escapeCode, LmsRecords, namesOf, oneLine, sessionOf } from './lms-files.js';

describe('LMS export files (docs/api.md §16)', () => {
  it('escapes a code character outside [A-Za-z0-9.-] as _ and two hex digits per UTF-8 byte', () => {
    expect(escapeCode('CSC101')).toBe('CSC101');
    expect(escapeCode('a.b-C')).toBe('a.b-C');
    expect(escapeCode('A_B')).toBe('A_5FB');
    expect(escapeCode('x/y z')).toBe('x_2Fy_20z');
    expect(escapeCode('é€😀')).toBe('_C3_A9_E2_82_AC_F0_9F_98_80');
  });

  it('writes a CR, LF or CRLF inside a value as one space', () => {
    expect(oneLine('a\r\nb\nc\rd\n\ne')).toBe('a b c d  e');
  });

  it.each([
    [
      { given_name: 'Grace', family_name: 'Hopper', display_name: 'Amazing Grace' },
      ['Grace', 'Hopper', 'Amazing Grace', false],
    ],
    [
      { given_name: null, family_name: null, display_name: 'Ada Lovelace King' },
      ['Ada', 'Lovelace King', 'Ada Lovelace King', true],
    ],
    [{ given_name: null, family_name: null, display_name: 'Plato' }, ['Plato', 'jdoe', 'Plato', true]],
    [{ given_name: 'Jo', family_name: null, display_name: null }, ['Jo', 'jdoe', 'Jo jdoe', true]],
    [{ given_name: '', family_name: '', display_name: '' }, ['jdoe', 'jdoe', 'jdoe jdoe', true]],
  ])('names %j as given, family, full (synthesized?) %j', (fields, [given, family, full, synthesized]) => {
    expect(namesOf({ username: 'jdoe', ...fields })).toEqual({ given, family, full, synthesized });
  });

  it('runs a session from EXPORT_YEAR_START to the day before the next one', () => {
    expect(sessionOf(2026, { month: 1, day: 1 })).toEqual({
      startDate: '2026-01-01',
      endDate: '2026-12-31',
      schoolYear: 2026,
      startsAt: '2026-01-01T00:00:00Z',
      endsAt: '2027-01-01T00:00:00Z',
    });
    expect(sessionOf(2027, { month: 3, day: 1 })).toMatchObject({ endDate: '2028-02-29', schoolYear: 2028 });
  });

  it('titles a class by code and description, the code alone without one', () => {
    expect(classTitle({ id: 1, code: 'ABC123', description: 'Algebra' })).toBe('ABC123 Algebra');
    expect(classTitle({ id: 1, code: 'ABC123', description: null })).toBe('ABC123');
  });

  it('maps roles to teacher or student, primary only for Lecturers, and dates to UTC days', () => {
    const records = new LmsRecords(DEFAULT_CONFIG.lmsExport, 2026, 'id');
    const row = (role: ModuleRole, fields = {}) =>
      records.enrolment({
        module_id: 7,
        user_id: 9,
        role,
        effective_status: 'active',
        starts_at: new Date('2026-02-01T23:30:00Z'),
        ends_at: null,
        status_set_at: new Date('2026-05-05T01:00:00Z'),
        external_id: null,
        ...fields,
      });
    expect(row(ModuleRole.Lecturer)).toEqual([
      'mas-enr-7-9',
      '',
      '',
      'mas-class-7',
      'mas-org',
      'mas-user-9',
      'teacher',
      'true',
      '2026-02-01',
      '',
    ]);
    expect(row(ModuleRole.AssistantLecturer).slice(6, 8)).toEqual(['teacher', 'false']);
    expect(row(ModuleRole.Tutor).slice(6, 8)).toEqual(['teacher', 'false']);
    expect(row(ModuleRole.Student).slice(6, 8)).toEqual(['student', '']);
    expect(row(ModuleRole.Student, { effective_status: 'completed' })[9]).toBe('2026-05-05');
  });

  it('computes the drop as floor(100 × (previous − now) / previous), 0 when not fewer or no previous', () => {
    expect(dropPercent(null, 5)).toBe(0);
    expect(dropPercent(10, 12)).toBe(0);
    expect(dropPercent(3, 2)).toBe(33);
    expect(dropPercent(10, 0)).toBe(100);
  });

  it('reads the query with per-profile include values and their defaults', () => {
    expect(readExportParams({ year: '2026' }, 'oneroster-1.1').statuses).toEqual([
      'active',
      'upcoming',
      'completed',
    ]);
    expect(readExportParams({ year: '2026' }, 'canvas-sis').statuses).toEqual([
      'active',
      'upcoming',
      'completed',
      'inactive',
    ]);
    expect(
      readExportParams({ year: '2026', include: 'completed,upcoming', max_drop: '010' }, 'oneroster-1.1'),
    ).toEqual({
      year: 2026,
      userKey: 'id',
      statuses: ['active', 'upcoming', 'completed'],
      preview: false,
      maxDrop: 10,
    });
    expect(() =>
      readExportParams({ year: '2026', include: ['upcoming', 'completed'] }, 'canvas-sis'),
    ).toThrow('include must be a comma-separated list of: upcoming,completed,inactive');
  });
});
