// Part of test/modules-writes.e2e-spec.ts: creating and editing a module.
import { startTestApp, type TestApp, type UsedTestApp } from '../../support/app.js';
import { makeModule, makeUser, type ModuleRow, tokenFor } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { client } from '../../support/http.js';
import { failure, moduleJson, PERMISSION_DENIED } from '../../support/modules-fixtures.js';

const CODE = 'Module code must be in format ABC123';
const YEAR = 'Year must be between 1900 and 9999';
const DESCRIPTION = 'Description must be at most 1000 characters';
const CREDITS = 'Credits must be a positive integer';
const CLASH = 'A module with this code already exists for this year';

const valid = { code: 'CSC101', year: 2026, description: 'Intro', credits: 15 };

export function moduleCreateAndEdit({ app, api }: UsedTestApp): void {
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
}
