// Part of test/modules-rollover.e2e-spec.ts: what a rollover refuses.
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { assignRole, makeUser, tokenFor } from '../../support/factories.js';
import { failure, PERMISSION_DENIED } from '../../support/modules-fixtures.js';
import { FROM, type RolloverContext, snapshot, TO } from './context.js';

export function rolloverRefusals(ctx: RolloverContext): void {
  const { app, api, rollover, staffed } = ctx;

  describe('refusals', () => {
    it('answers 400 with every broken rule, in field order, and changes nothing', async () => {
      await staffed('ABC100');
      const before = await snapshot(app.dataSource);
      const cases: [unknown, string][] = [
        [{ from_year: FROM, to_year: FROM }, 'to_year must differ from from_year'],
        [{ to_year: TO }, 'Year must be between 1900 and 9999'],
        [{ from_year: FROM }, 'Year must be between 1900 and 9999'],
        [{ from_year: '2026', to_year: 1899 }, 'Year must be between 1900 and 9999'],
        [{ from_year: FROM, to_year: 10000 }, 'Year must be between 1900 and 9999'],
        [{ from_year: FROM, to_year: 2027.5 }, 'Year must be between 1900 and 9999'],
        [{}, 'Year must be between 1900 and 9999'],
        [
          { from_year: FROM, to_year: TO, codes: ['ABC100', 'abc101'] },
          'codes must be an array of module codes in format ABC123',
        ],
        [
          { from_year: FROM, to_year: TO, codes: 'ABC100' },
          'codes must be an array of module codes in format ABC123',
        ],
        [
          { from_year: FROM, to_year: TO, codes: [1] },
          'codes must be an array of module codes in format ABC123',
        ],
        [{ from_year: FROM, to_year: TO, codes: [] }, 'codes must hold at least one module code'],
        [
          { from_year: FROM, to_year: TO, roles: ['Lecturer', 'Dean'] },
          'roles must be an array of roles: Lecturer, AssistantLecturer, Tutor, Student',
        ],
        [
          { from_year: FROM, to_year: TO, roles: 'Lecturer' },
          'roles must be an array of roles: Lecturer, AssistantLecturer, Tutor, Student',
        ],
        [{ from_year: FROM, to_year: TO, force: true }, 'property force should not exist'],
        [
          { extra: 1, roles: [null], codes: ['x'], to_year: FROM, from_year: FROM },
          'to_year must differ from from_year; codes must be an array of module codes in format ABC123; ' +
            'roles must be an array of roles: Lecturer, AssistantLecturer, Tutor, Student; property extra should not exist',
        ],
        [[FROM, TO], 'Request body must be a JSON object'],
        ['{"from_year": 2026,', 'Malformed JSON body'],
      ];
      for (const [body, message] of cases) {
        const res = await rollover(body);
        expect([body, res.status, res.body]).toEqual([body, 400, failure(message)]);
      }
      const query = await rollover({ from_year: FROM, to_year: TO }, { query: '?dry_run=yes' });
      expect([query.status, query.body]).toEqual([400, failure('dry_run must be true or false')]);
      expect(await snapshot(app.dataSource)).toEqual(before);
    });

    it('accepts null for codes and roles as their defaults', async () => {
      await staffed('ABC100');
      const res = await rollover({ from_year: FROM, to_year: TO, codes: null, roles: null });
      expect(res.body.data).toMatchObject({ created: 1, members_copied: 3 });
    });

    it('requires a token, then admin rights, before the body', async () => {
      await staffed('ABC100');
      const lecturer = await makeUser(app.dataSource);
      const [{ id }] = await app.dataSource.query(`SELECT id FROM modules WHERE code = 'ABC100'`);
      await assignRole(app.dataSource, lecturer.id, id, ModuleRole.Lecturer);
      const before = await snapshot(app.dataSource);
      const anonymous = await api.post('/api/modules/rollover', { body: { from_year: FROM, to_year: TO } });
      expect([anonymous.status, anonymous.body]).toEqual([401, failure('Authentication required')]);
      for (const body of [{ from_year: FROM, to_year: TO }, {}]) {
        const res = await rollover(body, { token: tokenFor(lecturer) });
        expect([res.status, res.body]).toEqual([403, failure(PERMISSION_DENIED)]);
      }
      expect(await snapshot(app.dataSource)).toEqual(before);
    });

    it('answers 413 for more than 10000 codes or more than 10000 modules of from_year, changing nothing', async () => {
      const codes = Array.from(
        { length: 10_001 },
        (_, i) => `A${String.fromCharCode(65 + Math.floor(i / 1000))}A${String(i % 1000).padStart(3, '0')}`,
      );
      expect(new Set(codes).size).toBe(10_001);
      const many = await rollover({ from_year: FROM, to_year: TO, codes });
      expect([many.status, many.body]).toEqual([413, failure('At most 10000 modules per rollover')]);
      // 10 000 codes are allowed (repeats count once).
      const allowed = await rollover({
        from_year: FROM,
        to_year: TO,
        codes: [...codes.slice(0, 10_000), codes[0]],
      });
      expect(allowed.status).toBe(201);
      expect(allowed.body.data.missing).toBe(10_000);

      await app.dataSource.query(
        `INSERT INTO modules (code, year, credits)
         SELECT 'Y' || chr(65 + g / 1000) || 'Z' || lpad((g % 1000)::text, 3, '0'), $1, 5 FROM generate_series(0, 10000) g`,
        [FROM],
      );
      const before = await snapshot(app.dataSource);
      for (const dryRun of [false, true]) {
        const res = await rollover({ from_year: FROM, to_year: TO }, { dryRun });
        expect([res.status, res.body]).toEqual([413, failure('At most 10000 modules per rollover')]);
      }
      expect(await snapshot(app.dataSource)).toEqual(before);
    });
  });
}
