// Part of test/exports.e2e-spec.ts: user_key=external_id, the same files twice, and the requests refused.
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { type UserRow } from '../../support/factories.js';
import { failure } from '../../support/http.js';
import { readZip } from '../../support/lms-zip.js';
import { CANVAS, type ExportsContext, ONEROSTER } from './context.js';

export function exportRequests(ctx: ExportsContext): void {
  const { api, given, get, exported, person, member, byId } = ctx;

  describe('user_key=external_id', () => {
    it('names every user the external_id ids of the users without a usable one, at most 20', async () => {
      for (const path of [ONEROSTER, CANVAS]) {
        const res = await api.get(`${path}?year=2026&user_key=external_id`, { token: given.adminToken });
        expect(res.status).toBe(200);
      }
      const bad = [await person({ external_id: 'has space' }), await person()];
      for (const user of bad) await member(user, given.year.plain.id, ModuleRole.Student);
      const res = await api.get(`${ONEROSTER}?year=2026&user_key=external_id&preview=true`, {
        token: given.adminToken,
      });
      expect(res.status).toBe(422);
      expect(res.body).toEqual(failure(`Users without a usable external_id: ${bad[0].id}, ${bad[1].id}`));
      const many: UserRow[] = [];
      for (let i = 0; i < 21; i++) many.push(await person());
      for (const user of many) await member(user, given.year.odd.id, ModuleRole.Student);
      const all = [...bad, ...many].map((user) => user.id).sort((a, b) => a - b);
      const more = await api.get(`${CANVAS}?year=2026&user_key=external_id`, { token: given.adminToken });
      expect(more.status).toBe(422);
      expect(more.body.message).toBe(`Users without a usable external_id: ${all.slice(0, 20).join(', ')}, …`);
    });

    it('writes the external_id as the user id, and the own id as Canvas integration_id', async () => {
      const files = await exported(`${CANVAS}?year=2026&user_key=external_id`);
      const users = byId(files.get('users.csv')!, 'user_id');
      expect(users.get('ada@uni.edu')).toMatchObject({
        integration_id: `mas-user-${given.year.assistant.id}`,
      });
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
    const res = await api.get(`${ONEROSTER}?${query}`, { token: given.adminToken });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, data: null, message });
  });

  it("answers 400 with Canvas's own include values, and 422 for a year without modules", async () => {
    const res = await api.get(`${CANVAS}?year=2026&include=archived`, { token: given.adminToken });
    expect(res.body.message).toBe('include must be a comma-separated list of: upcoming,completed,inactive');
    for (const path of [ONEROSTER, CANVAS]) {
      const none = await api.get(`${path}?year=2040&preview=true`, { token: given.adminToken });
      expect(none.status).toBe(422);
      expect(none.body).toEqual(failure('Nothing to export: year 2040 has no modules'));
    }
  });
}
