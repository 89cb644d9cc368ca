// Part of test/exports.e2e-spec.ts: preview, max_drop and the audit trail.
import { auditEvents } from '../../support/csv.js';
import { failure } from '../../support/http.js';
import { makeIntegrationToken } from '../../support/token-fixtures.js';
import { CANVAS, type ExportsContext, ONEROSTER } from './context.js';

export function exportPreview(ctx: ExportsContext): void {
  const { api, given, get, ds } = ctx;

  describe('preview, max_drop and the audit trail', () => {
    /** The OneRoster files of the year 2026 and their rows. */
    const ONEROSTER_FILES = {
      'orgs.csv': 1,
      'academicSessions.csv': 1,
      'courses.csv': 3,
      'classes.csv': 3,
      'users.csv': 8,
      'enrollments.csv': 10,
    };
    const preview = (path: string, query = '') =>
      api.get(`${path}?year=2026&preview=true${query}`, { token: given.adminToken });

    it('previews without writing anything, then remembers each export for the drop', async () => {
      const res = await preview(ONEROSTER);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'Export checked',
        data: {
          profile: 'oneroster-1.1',
          year: 2026,
          files: ONEROSTER_FILES,
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
        given.year.intro.id,
      ]);
      const after = await preview(ONEROSTER, '&max_drop=10');
      expect(after.body.data).toMatchObject({ enrollments: 5, previous_enrollments: 10, drop_percent: 50 });
      const refused = await api.get(`${ONEROSTER}?year=2026&max_drop=49`, { token: given.adminToken });
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual(failure('Export would drop 5 of 10 enrollments; the limit is 49%'));
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
          actor_id: Number(given.admin.id),
          target_type: null,
          target_ids: [],
          summary: {
            profile: 'oneroster-1.1',
            year: 2026,
            user_key: 'external_id',
            files: ONEROSTER_FILES,
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
      const listed = await api.get('/api/audit?action=export.lms', { token: given.adminToken });
      expect(listed.body.data.total).toBe(2);
    });
  });
}
