import { startTestApp, type TestApp } from './support/app.js';
import { DEFAULT_PASSWORD, makeUser } from './support/factories.js';
import {
  conformingClient,
  type ConformingClient,
  DocumentValidator,
  fetchDocument,
  routeKey,
} from './support/openapi.js';
import { multipartBody } from './support/openapi-requests.js';

/**
 * A realistic session through the whole API. Every response, success or failure, must have a status the
 * document declares for its operation and a body that validates against the declared schema; every error
 * answer's message must be one the document lists for that operation and status.
 */

describe('responses conform to the OpenAPI document', () => {
  let app: TestApp;
  let api: ConformingClient;
  let validator: DocumentValidator;

  const state = {
    adminToken: '',
    adminId: 0,
    lecturer: { id: 0, token: '' },
    student: { id: 0, token: '' },
    outsider: { id: 0, token: '' },
    others: [] as number[],
    modules: [] as number[],
  };

  /** Calls and checks the status; the schema check happens in the client. */
  async function expectStatus(
    status: number,
    method: string,
    path: string,
    options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) {
    const res = await api.request(method, path, options);
    if (res.status !== status) {
      throw new Error(`${method} ${path}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res;
  }

  const signIn = async (username: string, password: string) => {
    const res = await expectStatus(200, 'POST', '/api/auth/login', { body: { username, password } });
    return { id: res.body.data.user.id as number, token: res.body.data.token as string };
  };

  beforeAll(async () => {
    app = await startTestApp();
    await app.reset();
    validator = new DocumentValidator(await fetchDocument(app.url));
    api = conformingClient(app.url, validator, { messages: true });
  });
  afterAll(() => app.close());

  // Each step reports its own mismatches; the walk goes on so one report lists everything.
  afterEach(() => {
    const found = api.problems.splice(0);
    expect(found).toEqual([]);
  });

  it('signs in, with the failures a client meets first', async () => {
    const admin = await makeUser(app.dataSource, { username: 'root', admin: true });
    await expectStatus(401, 'POST', '/api/auth/login', {
      body: { username: 'root', password: 'wrong-password' },
    });
    await expectStatus(400, 'POST', '/api/auth/login', { body: '{"username": "root",' });
    await expectStatus(400, 'POST', '/api/auth/login', { body: { username: 'root' } });
    await expectStatus(415, 'POST', '/api/auth/login', {
      body: 'username=root',
      headers: { 'content-type': 'text/plain' },
    });
    const session = await signIn('ROOT', DEFAULT_PASSWORD);
    state.adminToken = session.token;
    state.adminId = admin.id;
    await expectStatus(200, 'GET', '/api/auth/me', { token: state.adminToken });
    await expectStatus(401, 'GET', '/api/auth/me');
    await expectStatus(401, 'GET', '/api/auth/me', { token: 'not-a-token' });
    await expectStatus(200, 'GET', '/api/health');
    await expectStatus(200, 'GET', '/api/health/ready');
    await expectStatus(200, 'GET', '/api/auth/config');
  });

  it('creates and reads users', async () => {
    const token = state.adminToken;
    const create = (username: string, extra: object = {}) =>
      expectStatus(201, 'POST', '/api/users', {
        token,
        body: { username, email: `${username}@uni.example`, password: 'lecturer-password', ...extra },
      });
    state.lecturer.id = (await create('lena.lecturer')).body.data.id;
    state.student.id = (await create('sam.student')).body.data.id;
    state.outsider.id = (await create('olga.outsider')).body.data.id;
    await expectStatus(409, 'POST', '/api/users', {
      token,
      body: { username: 'LENA.lecturer', email: 'other@uni.example', password: 'lecturer-password' },
    });
    await expectStatus(400, 'POST', '/api/users', {
      token,
      body: { username: 'x', email: 'not-an-email', password: 'short', admin: 'yes', extra: 1 },
    });
    const bulkRequest = {
      token,
      headers: { 'idempotency-key': 'conformance-bulk-1' },
      body: {
        users: [
          { username: 'tom.tutor', email: 'tom@uni.example', password: 'tutor-password' },
          {
            username: 'amy.assistant',
            email: 'amy@uni.example',
            password: 'assistant-password',
            admin: false,
          },
        ],
      },
    };
    const bulk = await expectStatus(201, 'POST', '/api/users/bulk', bulkRequest);
    state.others = bulk.body.data.map((u: { id: number }) => u.id);
    // §17: a retry answered from memory, the key reused for another body (422), a malformed key (400).
    const replayed = await expectStatus(201, 'POST', '/api/users/bulk', bulkRequest);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.data.map((u: { id: number }) => u.id)).toEqual(state.others);
    await expectStatus(422, 'POST', '/api/users/bulk', { ...bulkRequest, body: { users: [] } });
    await expectStatus(400, 'POST', '/api/users/bulk', {
      ...bulkRequest,
      headers: { 'idempotency-key': 'a b' },
    });
    await expectStatus(409, 'POST', '/api/users/bulk', {
      token,
      body: { users: [{ username: 'tom.tutor', email: 'tom2@uni.example', password: 'tutor-password' }] },
    });
    await expectStatus(400, 'POST', '/api/users/bulk', { token, body: { users: [] } });

    await expectStatus(200, 'GET', '/api/users', { token });
    await expectStatus(200, 'GET', '/api/users?query=uni&sort=-created_at,username&page=1&per_page=2', {
      token,
    });
    await expectStatus(200, 'GET', '/api/users?admin=false&per_page=1000', { token });
    await expectStatus(400, 'GET', '/api/users?sort=password', { token });
    await expectStatus(400, 'GET', '/api/users?page=1.5', { token });
    await expectStatus(200, 'GET', `/api/users/${state.student.id}`, { token });
    await expectStatus(404, 'GET', '/api/users/999999999', { token });
    await expectStatus(400, 'GET', '/api/users/abc', { token });
    await expectStatus(200, 'PUT', `/api/users/${state.student.id}`, {
      token,
      body: { email: 'Sam.Student@Uni.Example' },
    });
    await expectStatus(400, 'PUT', `/api/users/${state.student.id}`, { token, body: {} });
    await expectStatus(200, 'DELETE', `/api/users/${state.student.id}/sso-binding`, { token });
    await expectStatus(404, 'DELETE', '/api/users/999999999/sso-binding', { token });
    const binding = { issuer: 'https://login.example.edu', subject: 'subject-of-sam' };
    await expectStatus(200, 'PUT', `/api/users/${state.student.id}/sso-binding`, { token, body: binding });
    await expectStatus(409, 'PUT', `/api/users/${state.adminId}/sso-binding`, { token, body: binding });
    await expectStatus(400, 'PUT', `/api/users/${state.student.id}/sso-binding`, { token, body: {} });
    await expectStatus(404, 'PUT', '/api/users/999999999/sso-binding', { token, body: binding });
    await expectStatus(400, 'POST', '/api/auth/sso-binding', { token, body: { token: '' } });
    // No identity provider here: any token in the body fails verification.
    await expectStatus(401, 'POST', '/api/auth/sso-binding', { token, body: { token: 'a.b.c' } });
    await expectStatus(403, 'PUT', `/api/users/${state.adminId}`, { token, body: { admin: false } });

    state.lecturer.token = (await signIn('lena.lecturer', 'lecturer-password')).token;
    state.student.token = (await signIn('sam.student', 'lecturer-password')).token;
    state.outsider.token = (await signIn('olga.outsider', 'lecturer-password')).token;
    await expectStatus(403, 'GET', '/api/users', { token: state.lecturer.token });
  });

  it('uploads and serves an avatar', async () => {
    const token = state.adminToken;
    const path = `/api/users/${state.student.id}/avatar`;
    await expectStatus(404, 'GET', path, { token: state.student.token });
    const upload = await api.multipart('PUT', path, multipartBody(), token);
    expect(upload.status).toBe(200);
    const image = await expectStatus(200, 'GET', path, { token: state.student.token });
    const etag = image.headers.get('etag');
    expect(etag).toBeTruthy();
    await expectStatus(304, 'GET', path, { token: state.student.token, headers: { 'if-none-match': etag! } });
    const notImage = await api.multipart(
      'PUT',
      path,
      multipartBody([{ content: Buffer.from('plain text, not an image') }]),
      token,
    );
    expect(notImage.status).toBe(415);
    const noFile = await api.multipart('PUT', path, multipartBody([]), token);
    expect(noFile.status).toBe(400);
    await expectStatus(415, 'PUT', path, { token, body: { file: 'x' } });
  });

  it('creates, lists, reads and edits modules', async () => {
    const token = state.adminToken;
    for (const [code, year, description] of [
      ['CSC101', 2026, 'Introduction to Computing'],
      ['CSC102', 2026, null],
      ['MTH201', 2025, 'Linear Algebra'],
    ] as const) {
      const res = await expectStatus(201, 'POST', '/api/modules', {
        token,
        body: { code, year, description, credits: 15 },
      });
      state.modules.push(res.body.data.id);
    }
    await expectStatus(409, 'POST', '/api/modules', {
      token,
      body: { code: 'CSC101', year: 2026, credits: 10 },
    });
    await expectStatus(400, 'POST', '/api/modules', {
      token,
      body: { code: 'csc-1', year: '2026', credits: 0, description: 'x'.repeat(1001), unknown: true },
    });
    await expectStatus(403, 'POST', '/api/modules', {
      token: state.lecturer.token,
      body: { code: 'PHY101', year: 2026, credits: 10 },
    });
    await expectStatus(413, 'POST', '/api/modules', {
      token,
      body: { code: 'PHY101', year: 2026, credits: 10, description: 'x'.repeat(1_100_000) },
    });

    await expectStatus(200, 'GET', '/api/modules', { token });
    await expectStatus(200, 'GET', '/api/modules?query=csc&year=2026&sort=-code&page=2&per_page=1', {
      token,
    });
    await expectStatus(400, 'GET', '/api/modules?sort=secret', { token });
    await expectStatus(400, 'GET', '/api/modules?year=twenty', { token });
    await expectStatus(200, 'GET', '/api/modules', { token: state.outsider.token });

    const [first] = state.modules;
    await expectStatus(200, 'GET', `/api/modules/${first}`, { token });
    await expectStatus(404, 'GET', '/api/modules/987654321', { token });
    await expectStatus(400, 'GET', '/api/modules/0', { token });
    await expectStatus(200, 'PUT', `/api/modules/${first}`, {
      token,
      body: { code: 'CSC101', year: 2026, credits: 20, description: 'Computing, revised' },
    });
    await expectStatus(409, 'PUT', `/api/modules/${first}`, {
      token,
      body: { code: 'CSC102', year: 2026, credits: 20 },
    });
    await expectStatus(404, 'PUT', '/api/modules/987654321', {
      token,
      body: { code: 'CSC109', year: 2026, credits: 20 },
    });
  });

  it('assigns personnel and students, and shows them to the right people', async () => {
    const token = state.adminToken;
    const [first, second] = state.modules;
    const [tutor, assistant] = state.others;
    const personnel = `/api/modules/${first}/personnel`;
    await expectStatus(200, 'POST', personnel, {
      token,
      body: { user_ids: [state.lecturer.id], role: 'Lecturer' },
    });
    await expectStatus(200, 'POST', personnel, {
      token: state.lecturer.token,
      body: { user_ids: [tutor, tutor], role: 'tutor' },
    });
    await expectStatus(200, 'POST', personnel, {
      token,
      body: { user_ids: [assistant], role: 'ASSISTANT_LECTURER' },
    });
    await expectStatus(403, 'POST', personnel, {
      token: state.lecturer.token,
      body: { user_ids: [state.outsider.id], role: 'Lecturer' },
    });
    await expectStatus(404, 'POST', personnel, { token, body: { user_ids: [987654321], role: 'Tutor' } });
    await expectStatus(400, 'POST', personnel, { token, body: { user_ids: [], role: 'Boss' } });
    await expectStatus(404, 'POST', '/api/modules/987654321/personnel', {
      token,
      body: { user_ids: [tutor], role: 'Tutor' },
    });

    const students = `/api/modules/${first}/students`;
    await expectStatus(200, 'POST', students, {
      token: state.lecturer.token,
      body: { user_ids: [state.student.id] },
    });
    await expectStatus(200, 'POST', `/api/modules/${second}/students`, {
      token,
      body: { user_ids: [state.student.id, state.lecturer.id] },
    });

    await expectStatus(200, 'GET', personnel, { token });
    await expectStatus(200, 'GET', `${personnel}?role=tutor&query=uni&sort=-username&per_page=5`, {
      token: state.lecturer.token,
    });
    await expectStatus(400, 'GET', `${personnel}?role=Dean`, { token });
    await expectStatus(200, 'GET', `${personnel}/eligible?sort=email`, { token });
    await expectStatus(200, 'GET', students, { token: state.lecturer.token });
    await expectStatus(403, 'GET', personnel, { token: state.student.token });
    await expectStatus(403, 'GET', students, { token: state.student.token });
    await expectStatus(403, 'GET', `/api/modules/${first}`, { token: state.outsider.token });

    await expectStatus(200, 'GET', `/api/modules/${first}`, { token: state.student.token });
    await expectStatus(200, 'GET', '/api/modules', { token: state.student.token });
    await expectStatus(200, 'GET', '/api/modules/me', { token: state.student.token });
    await expectStatus(200, 'GET', '/api/modules/me', { token: state.lecturer.token });
    await expectStatus(200, 'GET', `/api/users/${state.student.id}/modules`, { token });
    await expectStatus(404, 'GET', '/api/users/987654321/modules', { token });

    // The membership lifecycle (docs/api.md §15): list fields and filter, /me by status, PATCH …/members.
    await expectStatus(200, 'GET', `${students}?status=active`, { token });
    await expectStatus(400, 'GET', `${students}?status=gone`, { token });
    await expectStatus(200, 'GET', '/api/modules/me?status=completed', { token: state.student.token });
    await expectStatus(400, 'GET', '/api/modules/me?status=gone', { token: state.student.token });
    const members = `/api/modules/${first}/members`;
    await expectStatus(200, 'PATCH', members, {
      token,
      body: { user_ids: [state.student.id], starts_at: '2020-01-01T00:00:00Z', ends_at: null },
    });
    await expectStatus(400, 'PATCH', members, { token, body: { user_ids: [state.student.id] } });
    await expectStatus(403, 'PATCH', members, {
      token: state.student.token,
      body: { user_ids: [state.student.id], status: 'active' },
    });
    await expectStatus(404, 'PATCH', members, { token, body: { user_ids: [987654321], status: 'active' } });
    await expectStatus(409, 'PATCH', members, {
      token,
      body: { user_ids: [state.outsider.id], status: 'active' },
    });

    await expectStatus(409, 'DELETE', personnel, {
      token,
      body: { user_ids: [state.student.id], role: 'Tutor' },
    });
    await expectStatus(200, 'DELETE', personnel, { token, body: { user_ids: [tutor], role: 'Tutor' } });
    await expectStatus(200, 'DELETE', students, { token, body: { user_ids: [state.student.id] } });
    await expectStatus(409, 'DELETE', students, { token, body: { user_ids: [state.student.id] } });
  });

  it('rolls modules over into the next year', async () => {
    const token = state.adminToken;
    const body = { from_year: 2026, to_year: 2027, codes: ['CSC101', 'CSC102', 'ZZZ999'] };
    await expectStatus(200, 'POST', '/api/modules/rollover?dry_run=true', { token, body });
    const applied = await expectStatus(201, 'POST', '/api/modules/rollover', { token, body });
    expect(applied.body.data).toMatchObject({ created: 2, missing: 1 });
    await expectStatus(201, 'POST', '/api/modules/rollover', {
      token,
      body: { ...body, roles: ['student'] },
    });
    await expectStatus(400, 'POST', '/api/modules/rollover', {
      token,
      body: { from_year: 2026, to_year: 2026 },
    });
    await expectStatus(403, 'POST', '/api/modules/rollover', { token: state.lecturer.token, body });
    const codes = Array.from(
      { length: 10_001 },
      (_, i) => `R${String.fromCharCode(65 + Math.floor(i / 1000))}A${String(i % 1000).padStart(3, '0')}`,
    );
    await expectStatus(413, 'POST', '/api/modules/rollover', { token, body: { ...body, codes } });
  });

  it('imports and exports CSV, and reads the audit trail and the change events', async () => {
    const token = state.adminToken;
    const csv = (text: string) => ({ token, body: text, headers: { 'content-type': 'text/csv' } });
    const file = 'username,email,admin\nivy.import,ivy@uni.example,no\n';
    await expectStatus(200, 'POST', '/api/users/import?dry_run=true', csv(file));
    await expectStatus(201, 'POST', '/api/users/import', csv(file));
    await expectStatus(422, 'POST', '/api/users/import', csv('username,email\nx,not-an-email\n'));
    await expectStatus(400, 'POST', '/api/users/import', csv('username\nivy\n'));
    await expectStatus(415, 'POST', '/api/users/import', { token, body: { username: 'ivy' } });
    const exported = await expectStatus(200, 'GET', '/api/users/export.csv?sort=username', { token });
    expect(exported.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    await expectStatus(400, 'GET', '/api/users/export.csv?sort=nope', { token });

    const roster = `/api/modules/${state.modules[0]}/roster`;
    await expectStatus(200, 'POST', `${roster}/import?dry_run=true`, csv('user,role\nivy.import,Student\n'));
    await expectStatus(200, 'POST', `${roster}/import`, csv('user,role\nivy@uni.example,student\n'));
    await expectStatus(422, 'POST', `${roster}/import`, csv('user,role\nnobody,Student\n'));
    await expectStatus(
      409,
      'POST',
      `${roster}/import?mode=sync&max_removals=0`,
      csv('user,role\nivy.import,Student\n'),
    );
    await expectStatus(403, 'POST', `${roster}/import`, {
      ...csv('user,role\nivy.import,Student\n'),
      token: state.student.token,
    });
    await expectStatus(200, 'GET', `${roster}.csv`, { token });
    await expectStatus(404, 'GET', '/api/modules/987654321/roster.csv', { token });

    // The LMS roster exports of a year with modules (docs/lms-exports.md): a zip, its preview and its refusals.
    for (const profile of ['oneroster-1.1', 'canvas-sis']) {
      const zip = await expectStatus(200, 'GET', `/api/exports/${profile}.zip?year=2026`, { token });
      expect(zip.headers.get('content-type')).toBe('application/zip');
      await expectStatus(200, 'GET', `/api/exports/${profile}.zip?year=2026&preview=true`, { token });
      await expectStatus(400, 'GET', `/api/exports/${profile}.zip?year=next`, { token });
      await expectStatus(422, 'GET', `/api/exports/${profile}.zip?year=1999`, { token });
      await expectStatus(403, 'GET', `/api/exports/${profile}.zip?year=2026`, {
        token: state.lecturer.token,
      });
    }

    const audit = await expectStatus(200, 'GET', '/api/audit?action=user.import,roster.import&sort=-at', {
      token,
    });
    expect(audit.body.data.total).toBeGreaterThanOrEqual(2);
    await expectStatus(400, 'GET', '/api/audit?action=user.nope', { token });
    await expectStatus(403, 'GET', '/api/audit', { token: state.lecturer.token });

    // The change events the writes above left (docs/events.md).
    const events = await expectStatus(
      200,
      'GET',
      '/api/events?limit=5&types=module.members_changed,user.created',
      {
        token,
      },
    );
    expect(events.body.data.events.length).toBeGreaterThan(0);
    await expectStatus(200, 'GET', `/api/events?after=${events.body.data.next}&wait=0`, { token });
    await expectStatus(400, 'GET', '/api/events?after=not-a-cursor', { token });
    await expectStatus(400, 'GET', '/api/events?types=module.exploded', { token });
    await expectStatus(403, 'GET', '/api/events', { token: state.lecturer.token });
  });

  it('manages webhooks and reads their delivery log', async () => {
    const token = state.adminToken;
    const created = await expectStatus(201, 'POST', '/api/webhooks', {
      token,
      body: { url: 'https://203.0.113.10/hooks', types: ['module.created'], description: 'conformance' },
    });
    const id = created.body.data.id as number;
    await expectStatus(400, 'POST', '/api/webhooks', {
      token,
      body: { url: 'https://127.0.0.1/x', types: ['*'] },
    });
    await expectStatus(403, 'POST', '/api/webhooks', { token: state.lecturer.token, body: {} });
    await expectStatus(200, 'GET', '/api/webhooks', { token });
    await expectStatus(200, 'GET', `/api/webhooks/${id}`, { token });
    await expectStatus(404, 'GET', '/api/webhooks/987654321', { token });
    await expectStatus(200, 'PUT', `/api/webhooks/${id}`, { token, body: { enabled: false } });
    await expectStatus(400, 'PUT', `/api/webhooks/${id}`, { token, body: {} });
    await expectStatus(202, 'POST', `/api/webhooks/${id}/test`, { token });
    await expectStatus(200, 'GET', `/api/webhooks/${id}/deliveries`, { token });
    await expectStatus(200, 'DELETE', `/api/webhooks/${id}`, { token });
    await expectStatus(404, 'DELETE', `/api/webhooks/${id}`, { token });
  });

  it('manages integration tokens, and reads the feed with one', async () => {
    const token = state.adminToken;
    const created = await expectStatus(201, 'POST', '/api/tokens', {
      token,
      body: { name: 'conformance', scopes: ['events'], expires_at: null },
    });
    const id = created.body.data.id as number;
    await expectStatus(400, 'POST', '/api/tokens', { token, body: { name: '', scopes: [] } });
    await expectStatus(403, 'POST', '/api/tokens', { token: state.lecturer.token, body: {} });
    await expectStatus(200, 'GET', '/api/events', { token: created.body.data.token });
    await expectStatus(200, 'GET', '/api/tokens', { token });
    await expectStatus(400, 'DELETE', '/api/tokens/abc', { token });
    await expectStatus(200, 'DELETE', `/api/tokens/${id}`, { token });
    await expectStatus(404, 'DELETE', `/api/tokens/${id}`, { token });
  });

  it('changes a password', async () => {
    await expectStatus(401, 'PUT', '/api/auth/password', {
      token: state.outsider.token,
      body: { current_password: 'not-the-password', new_password: 'another-password' },
    });
    await expectStatus(400, 'PUT', '/api/auth/password', {
      token: state.outsider.token,
      body: { current_password: 'lecturer-password', new_password: 'short' },
    });
    await expectStatus(200, 'PUT', '/api/auth/password', {
      token: state.outsider.token,
      body: { current_password: 'lecturer-password', new_password: 'another-password' },
    });
  });

  it('deletes modules and users', async () => {
    const token = state.adminToken;
    const [first, second, third] = state.modules;
    await expectStatus(403, 'DELETE', `/api/modules/${first}`, { token: state.lecturer.token });
    await expectStatus(200, 'DELETE', `/api/modules/${first}`, { token });
    await expectStatus(404, 'DELETE', `/api/modules/${first}`, { token });
    await expectStatus(200, 'DELETE', '/api/modules/bulk', {
      token,
      body: { module_ids: [second, second, 987654321, third] },
    });
    await expectStatus(400, 'DELETE', '/api/modules/bulk', { token, body: { module_ids: [] } });
    await expectStatus(403, 'DELETE', `/api/users/${state.adminId}`, { token });
    await expectStatus(200, 'DELETE', `/api/users/${state.outsider.id}`, { token });
    await expectStatus(404, 'DELETE', `/api/users/${state.outsider.id}`, { token });
    await expectStatus(401, 'GET', '/api/auth/me', { token: state.outsider.token });
  });

  it('exercised every operation of the document', () => {
    const missed = validator.operations
      .map((o) => routeKey(o.method, o.path))
      .filter((key) => !api.exercised.has(key));
    expect(missed).toEqual([]);
    expect(api.checked).toBeGreaterThan(90);
  });
});
