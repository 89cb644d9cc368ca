import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { useTestApp } from './support/app.js';
import { DEFAULT_PASSWORD, makeUser } from './support/factories.js';
import { fetchDocument } from './support/openapi.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * A web client as its developers would write one: types generated from the served document by
 * openapi-typescript, calls through openapi-fetch. Run as its own Node program: sign in, create a module, list,
 * read, retry a create with an Idempotency-Key, edit with If-Match (and again with the stale ETag), and
 * read a module that does not exist.
 */
const SESSION_PROGRAM = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Module = components['schemas']['Module'];

const [baseUrl, username, password, code] = process.argv.slice(2);
const api = createClient<paths>({ baseUrl });

const login = await api.POST('/api/auth/login', { body: { username, password } });
if (!login.data) throw new Error('login failed: ' + login.error?.message);
const token: string = login.data.data.token;
const headers = { authorization: 'Bearer ' + token };

// A create that may be retried: the same Idempotency-Key twice creates once (the header is typed).
const create = () =>
  api.POST('/api/modules', {
    headers,
    params: { header: { 'Idempotency-Key': 'generated-client-create-' + code } },
    body: { code, year: 2026, credits: 20, description: 'Made through the generated client' },
  });
const created = await create();
if (!created.data) throw new Error('create failed: ' + created.error?.message);
const module: Module = created.data.data;
const retried = await create();
const retry = {
  status: retried.response.status,
  replayed: retried.response.headers.get('idempotent-replayed'),
  id: retried.data?.data.id,
};

const listed = await api.GET('/api/modules', { headers, params: { query: { code, per_page: 5, sort: '-code' } } });
if (!listed.data) throw new Error('list failed: ' + listed.error?.message);
const codes: string[] = listed.data.data.modules.map((m) => m.code);

const read = await api.GET('/api/modules/{module_id}', { headers, params: { path: { module_id: module.id } } });
if (!read.data) throw new Error('read failed: ' + read.error?.message);
const lecturers: number = read.data.data.lecturers.length;

// An edit guarded by the ETag of the read (If-Match, typed), then the same edit with that ETag, now stale.
const etag = read.response.headers.get('etag') ?? '';
const edit = (credits: number) =>
  api.PUT('/api/modules/{module_id}', {
    headers,
    params: { path: { module_id: module.id }, header: { 'If-Match': etag } },
    body: { code, year: 2026, credits, description: 'Made through the generated client' },
  });
const edited = await edit(30);
const stale = await edit(40);
const guarded = {
  edited: { status: edited.response.status, credits: edited.data?.data.credits, etagChanged: edited.response.headers.get('etag') !== etag },
  stale: { status: stale.response.status, message: stale.error?.message },
};

const missing = await api.GET('/api/modules/{module_id}', {
  headers,
  params: { path: { module_id: module.id + 1_000_000 } },
});
// Not error.data (always null): openapi-fetch drops properties typed exactly null (openapi-typescript#2717).
const refusal: { status: number; success: false | undefined; message: string | undefined } = {
  status: missing.response.status,
  success: missing.error?.success,
  message: missing.error?.message,
};

console.log(JSON.stringify({
  user: login.data.data.user.username,
  module,
  listed: { codes, total: listed.data.data.total, message: listed.data.message },
  read: { module: read.data.data, lecturers, message: read.data.message },
  refusal,
  retry,
  guarded,
}));
`;

/** Misuses the generated types in three ways; each marked line must be a type error. */
const MISUSE_PROGRAM = `
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const api = createClient<paths>({ baseUrl: 'http://127.0.0.1:1' });
await api.GET('/api/no-such-route'); // MISUSE
await api.POST('/api/modules', { body: { code: 101, year: 2026, credits: 15 } }); // MISUSE
const read = await api.GET('/api/modules/{module_id}', { params: { path: { module_id: 1 } } });
export const nope = read.data?.data.no_such_field; // MISUSE
`;

/** Type-checks the files with the project's TypeScript, strictly; returns each diagnostic as `file:line text`. */
function typeCheck(files: string[]): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: false,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    skipLibCheck: true,
  });
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...program.emit().diagnostics];
  return diagnostics.map((d) => {
    const where =
      d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return `${d.file ? path.basename(d.file.fileName) : '?'}:${where} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

describe('a typed client generated from the OpenAPI document', () => {
  // With SCIM on, as the build writes the document (src/openapi-document.ts).
  const { app } = useTestApp({ scimEnabled: true });
  let dir: string;
  let schema: string;
  /** Diagnostics of one strict type-check of both client programs (which also emits the session program). */
  let diagnostics: string[];

  beforeAll(async () => {
    // Inside the project, so that the client resolves openapi-fetch from its node_modules.
    await mkdir(path.join(ROOT, 'node_modules', '.cache'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, 'node_modules', '.cache', 'openapi-client-'));
    await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    schema = astToString(await openapiTS(JSON.stringify(await fetchDocument(app.url))));
    await writeFile(path.join(dir, 'schema.ts'), schema);
    await writeFile(path.join(dir, 'session.ts'), SESSION_PROGRAM);
    await writeFile(path.join(dir, 'misuse.ts'), MISUSE_PROGRAM);
    diagnostics = typeCheck([path.join(dir, 'session.ts'), path.join(dir, 'misuse.ts')]);
  }, 180_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));
  beforeEach(() => app.reset());

  it('is the same document the build writes without a database (what the lint checks)', async () => {
    const { stdout } = await run(process.execPath, [path.join(ROOT, 'dist/src/openapi-document.js')], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(JSON.parse(stdout)).toEqual(await fetchDocument(app.url));
  });

  it('types every path of the document', async () => {
    const document = await fetchDocument(app.url);
    const paths = Object.keys(document.paths);
    expect(paths.length).toBeGreaterThan(0);
    for (const route of paths) expect(schema).toContain(`"${route}": {`);
  });

  it('type-checks a client program, and refuses one that misuses the API', () => {
    expect(diagnostics.filter((d) => !d.startsWith('misuse.ts:'))).toEqual([]);
    const misuseLines = MISUSE_PROGRAM.split('\n').flatMap((line, index) =>
      line.includes('// MISUSE') ? [index + 1] : [],
    );
    expect(misuseLines).toHaveLength(3);
    for (const line of misuseLines) {
      expect(diagnostics.some((d) => d.startsWith(`misuse.ts:${line} `))).toBe(true);
    }
  });

  it('drives a real session: sign in, create a module, list, read, and a typed 404', async () => {
    await makeUser(app.dataSource, { username: 'client.admin', admin: true });
    const { stdout } = await run(
      process.execPath,
      [path.join(dir, 'session.js'), app.url, 'client.admin', DEFAULT_PASSWORD, 'GEN101'],
      { cwd: dir },
    );
    const result = JSON.parse(stdout);

    const [row] = await app.dataSource.query<{ id: number; credits: number; description: string }[]>(
      `SELECT id, credits, description FROM modules WHERE code = 'GEN101' AND year = 2026`,
    );
    expect(result.user).toBe('client.admin');
    expect(result.module).toMatchObject({
      id: row.id,
      code: 'GEN101',
      year: 2026,
      credits: 20,
      description: 'Made through the generated client',
    });
    // Changed once, by the guarded edit below.
    expect(row).toMatchObject({ credits: 30, description: 'Made through the generated client' });
    expect(result.listed).toEqual({ codes: ['GEN101'], total: 1, message: 'Modules retrieved successfully' });
    expect(result.read.module).toMatchObject({ ...result.module, lecturers: [], students: [] });
    expect(result.read.lecturers).toBe(0);
    expect(result.refusal).toEqual({ status: 404, success: false, message: 'Module not found' });
    // docs/api.md §17 through the typed headers: the retried create is answered from memory, and one module
    // exists; the guarded edit applies once, and the same edit with the now stale ETag is refused.
    expect(result.retry).toEqual({ status: 201, replayed: 'true', id: row.id });
    const [{ count }] = await app.dataSource.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM modules WHERE code = 'GEN101'`,
    );
    expect(count).toBe(1);
    expect(result.guarded).toEqual({
      edited: { status: 200, credits: 30, etagChanged: true },
      stale: { status: 412, message: 'The resource has changed; reload it and try again' },
    });
  }, 120_000);
});
