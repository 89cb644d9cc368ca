// Part of test/modules-lifecycle.e2e-spec.ts: roster import with membership columns.
import { postCsv } from '../../support/csv.js';
import { makeUser } from '../../support/factories.js';
import { failure } from '../../support/modules-fixtures.js';
import { type LifecycleContext } from './context.js';

export function rosterImportTests(ctx: LifecycleContext): void {
  const { app, api, member, stored, membersEvents, given } = ctx;

  describe('roster import with membership columns', () => {
    const importPath = (query = '') => `/api/modules/${given.module.id}/roster/import${query}`;

    it('sets status and dates from the file, an empty cell being the default, and keeps them when the columns are absent', async () => {
      const ann = await makeUser(app.dataSource, { username: 'ann' });
      const bob = await makeUser(app.dataSource, { username: 'bob' });
      const cy = await makeUser(app.dataSource, { username: 'cy' });
      await member(ann, 'Student', { status: 'inactive', ends_at: '2031-01-01T00:00:00.000Z' });
      await member(bob, 'Student');
      const file =
        'user,role,status,starts_at,ends_at\n' +
        'ann,Student,,,\n' +
        'bob,Student,completed,2030-01-01T00:00:00Z,2030-06-01T00:00:00Z\n' +
        'cy,Tutor,,2030-09-01T08:00:00+02:00,\n';
      const answer = await postCsv(api, importPath(), given.adminToken, file);
      expect(answer.status).toBe(200);
      expect(answer.body.data.rows.map((row: any) => row.action)).toEqual(['change', 'change', 'assign']);
      expect(answer.body.data).toMatchObject({ assigned: 1, changed: 2, unchanged: 0 });
      expect(await stored(ann)).toEqual({
        role: 'Student',
        status: 'active',
        starts_at: null,
        ends_at: null,
      });
      expect(await stored(bob)).toEqual({
        role: 'Student',
        status: 'completed',
        starts_at: '2030-01-01T00:00:00.000Z',
        ends_at: '2030-06-01T00:00:00.000Z',
      });
      expect(await stored(cy)).toEqual({
        role: 'Tutor',
        status: 'active',
        starts_at: '2030-09-01T06:00:00.000Z',
        ends_at: null,
      });
      // The same file again: unchanged; a file without the columns keeps the stored values.
      const again = await postCsv(api, importPath(), given.adminToken, file);
      expect(again.body.data.rows.map((row: any) => row.action)).toEqual([
        'unchanged',
        'unchanged',
        'unchanged',
      ]);
      const plain = await postCsv(api, importPath(), given.adminToken, 'user,role\nbob,Student\ncy,Tutor\n');
      expect(plain.body.data.rows.map((row: any) => row.action)).toEqual(['unchanged', 'unchanged']);
      expect(await stored(bob)).toMatchObject({ status: 'completed', ends_at: '2030-06-01T00:00:00.000Z' });
    });

    it('reports bad membership cells as row errors and changes nothing', async () => {
      const ann = await makeUser(app.dataSource, { username: 'ann' });
      await member(ann, 'Student', { starts_at: '2030-01-01T00:00:00.000Z' });
      const answer = await postCsv(
        api,
        importPath(),
        given.adminToken,
        'user,role,status,ends_at\nann,Student,gone,2029-01-01T00:00:00Z\nann2,Student,active,tomorrow\n',
      );
      expect(answer.status).toBe(422);
      expect(answer.body.data.rows.map((row: any) => row.errors)).toEqual([
        ['status must be one of active, inactive, completed', 'ends_at must be after starts_at'],
        ['Unknown user: ann2', 'ends_at must be an RFC 3339 timestamp'],
      ]);
      expect(await stored(ann)).toMatchObject({ status: 'active', ends_at: null });
    });

    it('concludes instead of deleting with on_remove, counting toward max_removals', async () => {
      const keep = await makeUser(app.dataSource, { username: 'keep' });
      const gone = await makeUser(app.dataSource, { username: 'gone' });
      const left = await makeUser(app.dataSource, { username: 'left' });
      await member(keep, 'Student');
      await member(gone, 'Student');
      await member(left, 'Tutor');
      expect(
        await postCsv(
          api,
          importPath('?mode=sync&on_remove=archive'),
          given.adminToken,
          'user,role\nkeep,Student\n',
        ),
      ).toMatchObject({
        status: 400,
        body: failure('on_remove must be one of delete, complete, inactivate'),
      });
      expect(
        await postCsv(
          api,
          importPath('?mode=sync&on_remove=complete&max_removals=1'),
          given.adminToken,
          'user,role\nkeep,Student\n',
        ),
      ).toMatchObject({ status: 409, body: failure('Sync would remove 2 members; the limit is 1') });
      const answer = await postCsv(
        api,
        importPath('?mode=sync&on_remove=complete&max_removals=2'),
        given.adminToken,
        'user,role\nkeep,Student\n',
      );
      expect(answer.status).toBe(200);
      expect(answer.body.data.removed).toEqual([
        { user_id: Number(gone.id), username: 'gone', role: 'Student' },
        { user_id: Number(left.id), username: 'left', role: 'Tutor' },
      ]);
      expect(await stored(gone)).toMatchObject({ role: 'Student', status: 'completed' });
      expect(await stored(left)).toMatchObject({ role: 'Tutor', status: 'completed' });
      expect((await membersEvents()).at(-1)).toEqual({
        module_id: Number(given.module.id),
        added: [],
        removed: [],
        changed: [],
        status_changed: [
          { user_id: Number(gone.id), from: 'active', to: 'completed' },
          { user_id: Number(left.id), from: 'active', to: 'completed' },
        ],
      });
      // Again: nothing left to conclude. With inactivate, the concluded stay as they are; delete removes them.
      const again = await postCsv(
        api,
        importPath('?mode=sync&on_remove=inactivate'),
        given.adminToken,
        'user,role\nkeep,Student\n',
      );
      expect(again.body.data.removed).toEqual([]);
      const deleted = await postCsv(
        api,
        importPath('?mode=sync&max_removals=5'),
        given.adminToken,
        'user,role\nkeep,Student\n',
      );
      expect(deleted.body.data.removed).toHaveLength(2);
      expect(await stored(gone)).toBeUndefined();
    });
  });
}
