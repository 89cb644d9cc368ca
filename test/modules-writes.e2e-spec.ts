// Writing modules: create, edit and delete.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import { startTestApp, type TestApp, useTestApp } from './support/app.js';
import { assignRole, makeModule, makeUser, type ModuleRow, tokenFor } from './support/factories.js';
import { freshAdmin } from './support/fresh-admin.js';
import { client } from './support/http.js';
import {
  addAssignmentWithFile,
  failure,
  moduleJson,
  PERMISSION_DENIED,
  rowsOfModule,
  storedFiles,
} from './support/modules-fixtures.js';

const CODE = 'Module code must be in format ABC123';
const YEAR = 'Year must be between 1900 and 9999';
const DESCRIPTION = 'Description must be at most 1000 characters';
const CREDITS = 'Credits must be a positive integer';
const CLASH = 'A module with this code already exists for this year';

const valid = { code: 'CSC101', year: 2026, description: 'Intro', credits: 15 };

describe('module create and edit', () => {
  const { app, api } = useTestApp();
  let adminToken: string;
  beforeEach(async () => {
    ({ token: adminToken } = await freshAdmin(app));
  });

  const stored = async (id: number) =>
    (await app.dataSource.query<ModuleRow[]>(`SELECT * FROM modules WHERE id = $1`, [id]))[0];

  /** Every way of breaking one field, with the message it must give. */
  const fieldCases: [string, Record<string, unknown>, string][] = [
    ['missing code', { code: undefined }, CODE],
    ['null code', { code: null }, CODE],
    ['numeric code', { code: 123456 }, CODE],
    ['lower-case code', { code: 'csc101' }, CODE],
    ['short code', { code: 'CS101' }, CODE],
    ['long code', { code: 'CSCC101' }, CODE],
    ['padded code', { code: ' CSC101' }, CODE],
    ['code with a newline', { code: 'CSC101\n' }, CODE],
    ['missing year', { year: undefined }, YEAR],
    ['string year', { year: '2026' }, YEAR],
    ['fractional year', { year: 2026.5 }, YEAR],
    ['year 1899', { year: 1899 }, YEAR],
    ['year 10000', { year: 10000 }, YEAR],
    ['boolean year', { year: true }, YEAR],
    ['null year', { year: null }, YEAR],
    ['numeric description', { description: 5 }, DESCRIPTION],
    ['1001-character description', { description: 'x'.repeat(1001) }, DESCRIPTION],
    ['1001 astral characters', { description: '😀'.repeat(1001) }, DESCRIPTION],
    ['description with NUL', { description: 'a\u0000b' }, 'Description must not contain NUL characters'],
    ['missing credits', { credits: undefined }, CREDITS],
    ['zero credits', { credits: 0 }, CREDITS],
    ['negative credits', { credits: -1 }, CREDITS],
    ['fractional credits', { credits: 1.5 }, CREDITS],
    ['string credits', { credits: '15' }, CREDITS],
    ['credits beyond 32 bits', { credits: 2147483648 }, CREDITS],
  ];

  describe('POST /api/modules', () => {
    const create = (body: unknown, token = adminToken) => api.post('/api/modules', { token, body });

    it('creates a module and answers 201 with it', async () => {
      const res = await create(valid);
      expect(res.status).toBe(201);
      const row = await stored(res.body.data.id);
      expect(res.body).toEqual({
        success: true,
        data: moduleJson(row),
        message: 'Module created successfully',
      });
      expect(res.body.data).toMatchObject(valid);
      expect(res.body.data.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(res.body.data.updated_at).toBe(res.body.data.created_at);
    });

    it('stores an omitted or null description as null and keeps an empty one empty', async () => {
      expect((await create({ code: 'AAA001', year: 2026, credits: 5 })).body.data.description).toBeNull();
      expect(
        (await create({ ...valid, code: 'AAA002', description: null })).body.data.description,
      ).toBeNull();
      const empty = await create({ ...valid, code: 'AAA003', description: '' });
      expect(empty.body.data.description).toBe('');
      expect((await stored(empty.body.data.id)).description).toBe('');
    });

    it('accepts the limits of every field', async () => {
      for (const body of [
        { code: 'LIM001', year: 1900, credits: 1, description: 'x'.repeat(1000) },
        { code: 'LIM002', year: 9999, credits: 2147483647, description: '😀'.repeat(1000) },
      ]) {
        const res = await create(body);
        expect(res.status).toBe(201);
        expect(res.body.data).toMatchObject(body);
      }
    });

    it.each(fieldCases)('rejects a %s', async (_name, change, message) => {
      const res = await create({ ...valid, ...change });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failure(message));
      expect(await app.dataSource.query(`SELECT id FROM modules`)).toEqual([]);
    });

    it('joins every failing rule in field order, unknown properties last', async () => {
      const res = await create({ zeta: 1, credits: 0, description: 7, year: 'x', code: 'bad', alpha: 2 });
      expect(res.body).toEqual(
        failure(
          `${CODE}; ${YEAR}; ${DESCRIPTION}; ${CREDITS}; property zeta should not exist; property alpha should not exist`,
        ),
      );
      expect((await create({})).body).toEqual(failure(`${CODE}; ${YEAR}; ${CREDITS}`));
      expect((await create({ ...valid, id: 5 })).body).toEqual(failure('property id should not exist'));
    });

    it('rejects a body that is not a JSON object', async () => {
      for (const body of ['[]', '"CSC101"', '42', 'null']) {
        const res = await create(body);
        expect([body, res.status, res.body]).toEqual([
          body,
          400,
          failure('Request body must be a JSON object'),
        ]);
      }
      expect((await create('{"code":')).body).toEqual(failure('Malformed JSON body'));
      expect((await create('')).body).toEqual(failure('Malformed JSON body'));
      const text = await api.post('/api/modules', {
        token: adminToken,
        body: 'code=CSC101',
        headers: { 'content-type': 'text/plain' },
      });
      expect([text.status, text.body]).toEqual([415, failure('Unsupported content type')]);
    });

    it('answers 409 when the code is taken for the year, and allows it for another year', async () => {
      await makeModule(app.dataSource, { code: 'CSC101', year: 2026 });
      const res = await create(valid);
      expect(res.status).toBe(409);
      expect(res.body).toEqual(failure(CLASH));
      expect((await create({ ...valid, year: 2027 })).status).toBe(201);
      expect((await create({ ...valid, code: 'CSC102' })).status).toBe(201);
    });

    it('answers 409 to one of two simultaneous creates of the same module', async () => {
      const results = await Promise.all([create(valid), create(valid), create(valid)]);
      expect(results.map((res) => res.status).sort()).toEqual([201, 409, 409]);
    });

    it('requires a token, then admin rights, before looking at the body', async () => {
      expect((await api.post('/api/modules', { body: valid })).body).toEqual(
        failure('Authentication required'),
      );
      const user = await makeUser(app.dataSource);
      for (const body of [valid, {}, { bogus: true }]) {
        const res = await create(body, tokenFor(user));
        expect([res.status, res.body]).toEqual([403, failure(PERMISSION_DENIED)]);
      }
      expect((await create(valid, tokenFor({ id: user.id, admin: true }))).status).toBe(403);
      expect(await app.dataSource.query(`SELECT id FROM modules`)).toEqual([]);
    });
  });

  describe('PUT /api/modules/{module_id}', () => {
    let module: ModuleRow;

    beforeEach(async () => {
      module = await makeModule(app.dataSource, {
        code: 'OLD100',
        year: 2020,
        description: 'Old',
        credits: 10,
      });
      await app.dataSource.query(
        `UPDATE modules SET created_at = '2020-01-01T00:00:00Z', updated_at = '2020-01-01T00:00:00Z' WHERE id = $1`,
        [module.id],
      );
    });

    const update = (id: number | string, body: unknown, token = adminToken) =>
      api.put(`/api/modules/${id}`, { token, body });

    it('replaces the module, keeps created_at and bumps updated_at', async () => {
      const before = Date.now();
      const res = await update(module.id, valid);
      expect(res.status).toBe(200);
      const row = await stored(module.id);
      expect(res.body).toEqual({
        success: true,
        data: moduleJson(row),
        message: 'Module updated successfully',
      });
      expect(res.body.data).toMatchObject({ id: Number(module.id), ...valid });
      expect(res.body.data.created_at).toBe('2020-01-01T00:00:00.000Z');
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThanOrEqual(before - 1000);
    });

    it('bumps updated_at even when nothing changes', async () => {
      const res = await update(module.id, { code: 'OLD100', year: 2020, description: 'Old', credits: 10 });
      expect(res.status).toBe(200);
      expect(res.body.data.updated_at).not.toBe('2020-01-01T00:00:00.000Z');
    });

    it('sets an omitted description to null', async () => {
      const res = await update(module.id, { code: 'OLD100', year: 2020, credits: 10 });
      expect(res.body.data.description).toBeNull();
      expect((await stored(module.id)).description).toBeNull();
    });

    it.each(fieldCases)('rejects a %s and changes nothing', async (_name, change, message) => {
      const res = await update(module.id, { ...valid, ...change });
      expect([res.status, res.body]).toEqual([400, failure(message)]);
      expect((await stored(module.id)).code).toBe('OLD100');
    });

    it('answers 409 when another module has the code for the year', async () => {
      await makeModule(app.dataSource, { code: 'CSC101', year: 2026 });
      const res = await update(module.id, valid);
      expect([res.status, res.body]).toEqual([409, failure(CLASH)]);
      expect((await stored(module.id)).code).toBe('OLD100');
    });

    it('answers 404 for an unknown module, after validation', async () => {
      expect((await update(Number(module.id) + 1000, valid)).body).toEqual(failure('Module not found'));
      expect((await update(Number(module.id) + 1000, {})).body).toEqual(
        failure(`${CODE}; ${YEAR}; ${CREDITS}`),
      );
    });

    it('checks the path id before the body', async () => {
      expect((await update('abc', valid)).body).toEqual(failure('module_id must be a positive integer'));
      expect((await update('0', {})).body).toEqual(failure('module_id must be a positive integer'));
    });

    it('requires a token, then admin rights', async () => {
      expect((await api.put(`/api/modules/${module.id}`, { body: valid })).status).toBe(401);
      const user = await makeUser(app.dataSource);
      expect((await update(module.id, valid, tokenFor(user))).body).toEqual(failure(PERMISSION_DENIED));
      expect((await update('abc', {}, tokenFor(user))).status).toBe(403);
      expect((await stored(module.id)).code).toBe('OLD100');
    });
  });

  describe('with MODULE_CODE_PATTERN set', () => {
    let custom: TestApp;

    beforeAll(async () => {
      custom = await startTestApp({ moduleCodePattern: '^[A-Z]{2,4}-[0-9]{4}$' });
    });
    afterAll(() => custom.close());

    it('validates codes against the configured pattern, with the same message', async () => {
      const customApi = client(custom.url);
      const ok = await customApi.post('/api/modules', {
        token: adminToken,
        body: { ...valid, code: 'CS-1010' },
      });
      expect(ok.status).toBe(201);
      const bad = await customApi.post('/api/modules', { token: adminToken, body: valid });
      expect(bad.body).toEqual(failure(CODE));
      const both = await customApi.post('/api/modules', { token: adminToken, body: { ...valid, year: 1 } });
      expect(both.body).toEqual(failure(`${CODE}; ${YEAR}`));
      // The default-pattern service in the same process keeps its own rule.
      expect(
        (await api.post('/api/modules', { token: adminToken, body: { ...valid, code: 'CS-1011' } })).body,
      ).toEqual(failure(CODE));
    });
  });
});

const NO_ROWS = { modules: 0, user_module_roles: 0, assignments: 0, assignment_files: 0 };

describe('module deletion', () => {
  const { app, api } = useTestApp();
  let adminToken: string;
  beforeEach(async () => {
    ({ token: adminToken } = await freshAdmin(app, { clearStorage: true }));
  });

  /** A module with two role holders, two assignments and two files on disk. */
  async function populated(): Promise<{ module: ModuleRow; keys: string[] }> {
    const module = await makeModule(app.dataSource);
    const lecturer = await makeUser(app.dataSource);
    const student = await makeUser(app.dataSource);
    await assignRole(app.dataSource, lecturer.id, module.id, ModuleRole.Lecturer);
    await assignRole(app.dataSource, student.id, module.id, ModuleRole.Student);
    const keys = [
      await addAssignmentWithFile(app, module.id, 'one'),
      await addAssignmentWithFile(app, module.id, 'two'),
    ];
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
});
