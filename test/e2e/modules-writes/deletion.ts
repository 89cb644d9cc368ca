// Part of test/modules-writes.e2e-spec.ts: deleting modules, one or in bulk, and what goes with them.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import {
  addAssignmentWithFile,
  failure,
  makeModule,
  makeUser,
  ModuleRole,
  type ModuleRow,
  PERMISSION_DENIED,
  populatedModule,
  rowsOfModule,
  storedFiles,
  tokenFor,
} from '../../support/modules-fixtures.js';

const NO_ROWS = { modules: 0, user_module_roles: 0, assignments: 0, assignment_files: 0 };

export function moduleDeletion({ app, api }: UsedTestApp): void {
  let adminToken: string;
  beforeEach(async () => {
    ({ token: adminToken } = await freshAdmin(app, { clearStorage: true }));
  });

  /** A module with two role holders, two assignments and two files on disk. */
  async function populated(): Promise<{ module: ModuleRow; keys: string[] }> {
    const { module, keys } = await populatedModule(
      app,
      [ModuleRole.Lecturer, ModuleRole.Student],
      ['one', 'two'],
    );
    expect(await rowsOfModule(app.dataSource, module.id)).toEqual({
      modules: 1,
      user_module_roles: 2,
      assignments: 2,
      assignment_files: 2,
    });
    return { module, keys };
  }

  describe('DELETE /api/modules/{module_id}', () => {
    const remove = (id: number | string, token = adminToken) => api.delete(`/api/modules/${id}`, { token });

    it('removes the module, its roles, assignments, file records and files', async () => {
      const { module } = await populated();
      const kept = await populated();
      const res = await remove(module.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, data: null, message: 'Module deleted successfully' });
      expect(await rowsOfModule(app.dataSource, module.id)).toEqual(NO_ROWS);
      expect(await storedFiles(app.config.storageDir)).toEqual([...kept.keys].sort());
      expect((await rowsOfModule(app.dataSource, kept.module.id)).assignment_files).toBe(2);
      // The users themselves stay.
      expect((await app.dataSource.query(`SELECT count(*)::int AS n FROM users`))[0].n).toBe(5);
    });

    it('answers 404 for an unknown or already deleted module', async () => {
      const module = await makeModule(app.dataSource);
      expect((await remove(module.id)).status).toBe(200);
      const again = await remove(module.id);
      expect([again.status, again.body]).toEqual([404, failure('Module not found')]);
      expect((await remove('9223372036854775807')).body).toEqual(failure('Module not found'));
    });

    it('rejects a bad module_id', async () => {
      expect((await remove('x')).body).toEqual(failure('module_id must be a positive integer'));
      expect((await remove('-4')).status).toBe(400);
    });

    it('requires a token, then admin rights', async () => {
      const { module } = await populated();
      expect((await api.delete(`/api/modules/${module.id}`)).body).toEqual(
        failure('Authentication required'),
      );
      const lecturer = (
        await app.dataSource.query(`SELECT user_id FROM user_module_roles WHERE role = 'Lecturer'`)
      )[0].user_id;
      const res = await remove(module.id, tokenFor({ id: lecturer, admin: false }));
      expect([res.status, res.body]).toEqual([403, failure(PERMISSION_DENIED)]);
      expect((await remove('x', tokenFor({ id: lecturer, admin: false }))).status).toBe(403);
      expect((await remove(module.id + 1000, tokenFor({ id: lecturer, admin: false }))).status).toBe(403);
      expect((await rowsOfModule(app.dataSource, module.id)).modules).toBe(1);
    });
  });

  describe('DELETE /api/modules/bulk', () => {
    const bulk = (body: unknown, token = adminToken) => api.delete('/api/modules/bulk', { token, body });

    it('deletes every found module with all its rows and files, reporting failures in request order', async () => {
      const a = await populated();
      const b = await populated();
      const kept = await populated();
      const unknown = Number(kept.module.id) + 1000;
      const sent = [unknown, a.module.id, 0, b.module.id, -7, a.module.id, unknown, b.module.id];
      const res = await bulk({ module_ids: sent });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          deleted: 2,
          failed: [
            { id: unknown, error: 'Module not found' },
            { id: 0, error: 'Module not found' },
            { id: -7, error: 'Module not found' },
            { id: Number(a.module.id), error: 'Duplicate module ID' },
            { id: unknown, error: 'Duplicate module ID' },
            { id: Number(b.module.id), error: 'Duplicate module ID' },
          ],
        },
        message: 'Deleted 2/8 modules',
      });
      for (const { module } of [a, b]) expect(await rowsOfModule(app.dataSource, module.id)).toEqual(NO_ROWS);
      expect((await rowsOfModule(app.dataSource, kept.module.id)).user_module_roles).toBe(2);
      expect(await storedFiles(app.config.storageDir)).toEqual([...kept.keys].sort());
    });

    it('answers 200 with every id failed when none exists', async () => {
      const res = await bulk({ module_ids: [999999, 999999, -1] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          deleted: 0,
          failed: [
            { id: 999999, error: 'Module not found' },
            { id: 999999, error: 'Duplicate module ID' },
            { id: -1, error: 'Module not found' },
          ],
        },
        message: 'Deleted 0/3 modules',
      });
    });

    it('takes up to 1000 ids and refuses more', async () => {
      const modules: ModuleRow[] = [];
      for (let i = 0; i < 3; i++) modules.push(await makeModule(app.dataSource));
      const thousand = Array.from({ length: 1000 }, (_, i) =>
        i < 3 ? Number(modules[i].id) : 1_000_000 + i,
      );
      const res = await bulk({ module_ids: thousand });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Deleted 3/1000 modules');
      expect(res.body.data.failed).toHaveLength(997);
      const tooMany = await bulk({ module_ids: [...thousand, 1] });
      expect([tooMany.status, tooMany.body]).toEqual([
        400,
        failure('At most 1000 module IDs are allowed per request'),
      ]);
    });

    it('requires at least one id', async () => {
      for (const body of [{ module_ids: [] }, {}, { module_ids: null }]) {
        expect((await bulk(body)).body).toEqual(failure('At least one module ID is required'));
      }
    });

    it('rejects ids that are not integers within 64 bits, and other bad bodies', async () => {
      const message = 'module_ids must be an array of 64-bit integers';
      for (const module_ids of [
        ['1'],
        [1.5],
        [1, null],
        [1e19],
        [-1e19],
        5,
        'all',
        { 0: 1 },
        [true],
        [[1]],
      ]) {
        const res = await bulk({ module_ids });
        expect([module_ids, res.status, res.body]).toEqual([module_ids, 400, failure(message)]);
      }
      expect((await bulk({ module_ids: [1], force: true })).body).toEqual(
        failure('property force should not exist'),
      );
      expect((await bulk([1, 2])).body).toEqual(failure('Request body must be a JSON object'));
      expect((await bulk('{')).body).toEqual(failure('Malformed JSON body'));
    });

    it('treats an id beyond 2^53 as an ordinary unknown id', async () => {
      // Sent as JSON text: such numbers arrive rounded (the largest to 2^63, which is no bigint).
      const res = await bulk('{"module_ids": [9007199254740993, 9223372036854775807]}');
      expect(res.status).toBe(200);
      expect(res.body.data.deleted).toBe(0);
      expect(res.body.data.failed.map((f: { error: string }) => f.error)).toEqual([
        'Module not found',
        'Module not found',
      ]);
    });

    it('requires a token, then admin rights, before the body', async () => {
      const module = await makeModule(app.dataSource);
      expect((await api.delete('/api/modules/bulk', { body: { module_ids: [module.id] } })).status).toBe(401);
      const user = await makeUser(app.dataSource);
      for (const body of [{ module_ids: [module.id] }, {}]) {
        expect((await bulk(body, tokenFor(user))).body).toEqual(failure(PERMISSION_DENIED));
      }
      expect((await rowsOfModule(app.dataSource, module.id)).modules).toBe(1);
    });

    it('deletes nothing, files included, when the transaction fails part-way', async () => {
      const a = await populated();
      const b = await populated();
      // A trigger makes the role deletion of module b fail after earlier statements touched module a.
      await app.dataSource.query(`
        CREATE FUNCTION test_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF OLD.module_id = ${Number(b.module.id)} THEN RAISE EXCEPTION 'refused by test'; END IF;
          RETURN OLD;
        END $$`);
      await app.dataSource.query(
        `CREATE TRIGGER test_refuse_delete BEFORE DELETE ON user_module_roles FOR EACH ROW EXECUTE FUNCTION test_refuse_delete()`,
      );
      try {
        const res = await bulk({ module_ids: [a.module.id, b.module.id] });
        expect([res.status, res.body]).toEqual([500, failure('An internal server error occurred')]);
        const single = await api.delete(`/api/modules/${b.module.id}`, { token: adminToken });
        expect([single.status, single.body]).toEqual([500, failure('An internal server error occurred')]);
      } finally {
        await app.dataSource.query(`DROP TRIGGER test_refuse_delete ON user_module_roles`);
        await app.dataSource.query(`DROP FUNCTION test_refuse_delete()`);
      }
      for (const { module } of [a, b]) {
        expect(await rowsOfModule(app.dataSource, module.id)).toEqual({
          modules: 1,
          user_module_roles: 2,
          assignments: 2,
          assignment_files: 2,
        });
      }
      expect(await storedFiles(app.config.storageDir)).toEqual([...a.keys, ...b.keys].sort());
      expect((await bulk({ module_ids: [a.module.id, b.module.id] })).body.message).toBe(
        'Deleted 2/2 modules',
      );
      expect(await storedFiles(app.config.storageDir)).toEqual([]);
    });
  });

  describe('startup sweep', () => {
    it("removes the folders of modules that no longer exist and keeps the others'", async () => {
      const storageDir = await mkdtemp(path.join(tmpdir(), 'mas-sweep-'));
      const first = await startTestApp({ storageDir });
      try {
        const kept = await makeModule(first.dataSource);
        const crashed = await makeModule(first.dataSource);
        const keptKey = await addAssignmentWithFile(first, kept.id);
        await addAssignmentWithFile(first, crashed.id);
        // As if the service stopped after the delete committed but before the files went.
        await first.dataSource.query(`DELETE FROM modules WHERE id = $1`, [crashed.id]);
        // Folders the sweep must leave alone: not a module id.
        await mkdir(path.join(storageDir, 'modules', 'notes'), { recursive: true });
        await writeFile(path.join(storageDir, 'modules', 'notes', 'keep.txt'), 'x');
        await mkdir(path.join(storageDir, 'modules', '0123'), { recursive: true });
        await writeFile(path.join(storageDir, 'modules', '0123', 'keep.txt'), 'x');
        await mkdir(path.join(storageDir, 'modules', '987654321'), { recursive: true });
        await writeFile(path.join(storageDir, 'modules', '987654321', 'orphan.txt'), 'x');
        expect(await storedFiles(storageDir)).toHaveLength(5);
        await first.close();

        const second = await startTestApp({ storageDir, backgroundWorkers: true });
        await second.close();
        expect(await storedFiles(storageDir)).toEqual(
          [keptKey, 'modules/0123/keep.txt', 'modules/notes/keep.txt'].sort(),
        );
      } finally {
        await rm(storageDir, { recursive: true, force: true });
      }
    });
  });
}
