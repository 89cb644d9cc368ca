import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import {
  type OpenAPIObject,
  type ParameterObject,
  type RequestBodyObject,
  type SchemaObject,
} from '@nestjs/swagger';
import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import { startTestApp, type TestApp } from './support/app.js';
import { assignRole, makeModule, makeUser, tokenFor, type UserRow } from './support/factories.js';
import { deref, DocumentValidator, type DocOperation, fetchDocument, routeKey } from './support/openapi.js';
import {
  bodyArbitrary,
  exampleValue,
  stringProperties,
  type KnownIds,
  pathArbitrary,
  queryArbitrary,
} from './support/openapi-arbitraries.js';

/**
 * OpenAPI-driven fuzzing: for every operation of the document, fast-check builds valid and mutated paths,
 * query strings and bodies from the document itself and sends them as admin, as a Lecturer, with no token or
 * a garbage one. The service must never answer 5xx, must always answer the envelope (or a file the document
 * declares), must answer as the document declares, and must change nothing when it answers 4xx.
 *
 * Bounded: FUZZ_RUNS runs per operation (default 40), and FUZZ_SECONDS for the whole file (default 40),
 * shared evenly between operations. A failure prints fast-check's seed; rerun with FUZZ_SEED=<seed>.
 * FUZZ_CONFORMANCE=0 leaves out the comparison with the document.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const TOTAL_MS = Number(process.env.FUZZ_SECONDS ?? 40) * 1000;
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
/** FUZZ_CONFORMANCE=0 checks only the service's own promises (no 5xx, envelope, no change on 4xx). */
const CONFORMANCE = process.env.FUZZ_CONFORMANCE !== '0';
/** FUZZ_VERBOSE=1 prints how often each operation answered each status. */
const VERBOSE = process.env.FUZZ_VERBOSE === '1';
const statuses = new Map<string, Record<number, number>>();

const TABLES = ['users', 'modules', 'user_module_roles', 'assignments', 'assignment_files'];

const app: TestApp = await startTestApp();
const document: OpenAPIObject = await fetchDocument(app.url);
const validator = new DocumentValidator(document);
const operations = validator.operations;
const perOperationMs = Math.max(500, Math.floor(TOTAL_MS / Math.max(1, operations.length)));

afterAll(async () => {
  if (VERBOSE)
    console.log([...statuses].map(([key, counts]) => `${key} ${JSON.stringify(counts)}`).join('\n'));
  await app.close();
});

/** Row count and checksum of every table, and the stored files: what a refused request must not touch. */
async function snapshot(): Promise<string> {
  const parts: string[] = [];
  for (const table of TABLES) {
    const [row] = await app.dataSource.query<{ n: string; sum: string | null }[]>(
      `SELECT count(*) AS n, md5(string_agg(t::text, '|' ORDER BY t::text)) AS sum FROM ${table} t`,
    );
    parts.push(`${table}:${row.n}:${row.sum ?? ''}`);
  }
  parts.push(`files:${(await listFiles(app.config.storageDir)).join(',')}`);
  return parts.join(' ');
}

async function listFiles(dir: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(dir, { recursive: true });
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const entry of entries.sort()) {
    const info = await stat(path.join(dir, entry)).catch(() => undefined);
    if (info?.isFile()) files.push(`${entry}=${info.size}`);
  }
  return files;
}

interface World {
  admin: UserRow;
  lecturer: UserRow;
  known: KnownIds;
}

async function seed(): Promise<World> {
  await app.reset();
  const admin = await makeUser(app.dataSource, { admin: true });
  const lecturer = await makeUser(app.dataSource);
  const student = await makeUser(app.dataSource);
  const first = await makeModule(app.dataSource);
  const second = await makeModule(app.dataSource, { description: null });
  await assignRole(app.dataSource, lecturer.id, first.id, ModuleRole.Lecturer);
  await assignRole(app.dataSource, student.id, first.id, ModuleRole.Student);
  return {
    admin,
    lecturer,
    known: { user: [admin.id, lecturer.id, student.id], module: [first.id, second.id] },
  };
}

type Caller = 'admin' | 'lecturer' | 'none' | 'garbage';

function fuzzOperation(op: DocOperation) {
  return async () => {
    const world = await seed();
    // Re-signed after every success, so a password change or a rename does not end the run early.
    const tokens = () => ({ admin: tokenFor(world.admin), lecturer: tokenFor(world.lecturer) });
    let current = tokens();
    let before = await snapshot();
    const sent: string[] = [];

    const property = fc.asyncProperty(
      pathArbitrary(document, op, world.known),
      queryArbitrary(document, op, world.known),
      bodyArbitrary(document, op, world.known),
      fc.constantFrom<Caller>('admin', 'admin', 'admin', 'lecturer', 'none', 'garbage'),
      async (pathname, query, body, caller) => {
        const hasBody = op.method !== 'GET' && body.body !== undefined;
        const headers: Record<string, string> = hasBody ? { ...body.headers } : {};
        if (caller === 'admin' || caller === 'lecturer') headers.authorization = `Bearer ${current[caller]}`;
        if (caller === 'garbage') headers.authorization = 'Bearer not.a.token';
        // A valid positive `wait` holds GET /api/events for up to 30 s when no event comes (a long-poll): the fuzz
        // sends it as 0, so a run tries many inputs instead of waiting; malformed values are sent as generated.
        const url =
          pathname +
          (op.path === '/api/events'
            ? query.replace(/([?&]wait=)0*[1-9]\d*(?=&|$)/g, (_, name: string) => `${name}0`)
            : query);
        const what = `${op.method} ${url} as ${caller} with ${hasBody ? body.description : 'no body'}`;
        sent.push(what);

        const response = await fetch(app.url + url, {
          method: op.method,
          headers,
          body: hasBody ? body.body : undefined,
        });
        const contentType = response.headers.get('content-type');
        const text = await response.text();
        const isJson = contentType?.startsWith('application/json') ?? false;
        let parsed: unknown = text === '' ? undefined : text;
        if (isJson) parsed = JSON.parse(text);

        const counts = statuses.get(routeKey(op.method, op.path)) ?? {};
        counts[response.status] = (counts[response.status] ?? 0) + 1;
        statuses.set(routeKey(op.method, op.path), counts);
        const problems: string[] = [];
        if (response.status >= 500) problems.push(`answered ${response.status}`);
        if (isJson) {
          const envelope = parsed as Record<string, unknown>;
          const keys = Object.keys(envelope ?? {})
            .sort()
            .join(',');
          if (
            keys !== 'data,message,success' ||
            typeof envelope.success !== 'boolean' ||
            typeof envelope.message !== 'string'
          ) {
            problems.push(`not the envelope: ${text.slice(0, 300)}`);
          } else if (envelope.success !== response.status < 400) {
            problems.push(`success ${String(envelope.success)} with status ${response.status}`);
          }
        }
        // Conformance: routes that reached an operation answer as the document declares (a path made
        // unroutable by a mutation is a 404 of the router, which only has to be the envelope).
        // As sent: fetch resolves dot segments, which may land on another operation.
        const sentPath = new URL(app.url + url).pathname;
        const check = validator.check(op.method, sentPath, response.status, parsed, contentType);
        if (check.operation) {
          if (CONFORMANCE) problems.push(...check.errors);
        } else if (response.status !== 404 || !isJson)
          problems.push(`unroutable path answered ${response.status}`);

        const after = await snapshot();
        if (response.status >= 400 && response.status < 500 && after !== before) {
          problems.push(`a ${response.status} changed data:\n  before ${before}\n  after  ${after}`);
        }
        if (response.status < 400) current = tokens();
        before = after;

        if (problems.length) {
          throw new Error(`${what}\n→ ${response.status} ${text.slice(0, 300)}\n${problems.join('\n')}`);
        }
      },
    );

    await fc.assert(property, {
      numRuns: RUNS,
      interruptAfterTimeLimit: perOperationMs,
      markInterruptAsFailure: false,
      endOnFailure: true,
      seed: SEED,
    });
    expect(sent.length).toBeGreaterThan(0);
  };
}

describe('OpenAPI-driven fuzzing', () => {
  it('has operations to fuzz', () => {
    expect(operations.length).toBeGreaterThan(0);
  });

  it('never fails on a NUL character in a text parameter or body field (PostgreSQL refuses them)', async () => {
    const world = await seed();
    const token = tokenFor(world.admin);
    const failures: string[] = [];
    const send = async (op: DocOperation, query: string, body?: unknown) => {
      const url = op.path.replace(/\{[^}]+\}/g, (name) =>
        String(name.includes('module') ? world.known.module[0] : world.known.user[1]),
      );
      const response = await fetch(app.url + url + query, {
        method: op.method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status >= 500 || !response.headers.get('content-type')?.startsWith('application/json')) {
        failures.push(
          `${op.method} ${url}${query} ${JSON.stringify(body) ?? ''} → ${response.status} ${text}`,
        );
      }
    };
    for (const op of operations) {
      const queryParameters = (op.operation.parameters ?? []).filter(
        (p) =>
          'in' in p && p.in === 'query' && deref<SchemaObject>(document, p.schema ?? {}).type === 'string',
      ) as ParameterObject[];
      for (const parameter of queryParameters) await send(op, `?${parameter.name}=a%00b`);
      const schema = (op.operation.requestBody as RequestBodyObject | undefined)?.content['application/json']
        ?.schema;
      if (!schema) continue;
      for (const field of stringProperties(document, schema)) {
        const body = exampleValue(document, schema) as Record<string, unknown>;
        await send(op, '', { ...body, [field]: 'a\u0000b' });
      }
    }
    expect(failures).toEqual([]);
  });

  it('answers URLs the router refuses by itself in the envelope', async () => {
    const world = await seed();
    const token = tokenFor(world.admin);
    for (const [url, message] of [
      ['/api/modules/%E0%A4%A', 'Malformed URL: the path is not valid percent-encoding'],
      ['/api/users/%ZZ/modules', 'Malformed URL: the path is not valid percent-encoding'],
      [`/api/modules/${'9'.repeat(5000)}`, 'module_id must be a positive integer'],
      [`/api/users/${'x'.repeat(12_000)}`, 'user_id must be a positive integer'],
    ]) {
      const response = await fetch(app.url + url, { headers: { authorization: `Bearer ${token}` } });
      expect({ url: url.slice(0, 40), status: response.status, body: await response.json() }).toEqual({
        url: url.slice(0, 40),
        status: 400,
        body: { success: false, data: null, message },
      });
    }
  });

  for (const op of operations) {
    it(
      `${routeKey(op.method, op.path)}: no 5xx, always the envelope, as documented, no change on 4xx`,
      fuzzOperation(op),
      perOperationMs + 30_000,
    );
  }
});
