/**
 * fast-check arbitraries derived from an OpenAPI 3.0 document: valid values for a schema, and the mutations a
 * careless or hostile client sends (wrong types, huge numbers, empty arrays, long strings, unicode, extra
 * fields, missing fields, bodies that are not objects or not JSON at all).
 */
import fc from 'fast-check';
import { type OpenAPIObject, type ParameterObject, type SchemaObject } from '@nestjs/swagger';
import { deref, type DocOperation } from './openapi.js';
import { multipartBody, TINY_PNG } from './openapi-requests.js';
import { EMAIL_SCHEMA } from '../../src/users/user-rules.js';

/** Ids that exist, so that valid requests reach past the 404s. */
export interface KnownIds {
  user: number[];
  module: number[];
}

const MAX_VALID_ITEMS = 3;
const MAX_VALID_STRING = 40;

const HUGE_NUMBERS = [
  2 ** 31,
  2 ** 32,
  2 ** 53,
  2 ** 63,
  -(2 ** 63),
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER + 2,
  0.5,
  -0,
];

/** Any JSON value of a type other than the schema's. */
function wrongType(schema: SchemaObject): fc.Arbitrary<unknown> {
  const type = schema.type;
  const choices: fc.Arbitrary<unknown>[] = [fc.constant(null)];
  if (type !== 'string') choices.push(fc.string({ maxLength: 10 }), fc.constantFrom('1', '2025', 'true', ''));
  if (type !== 'integer' && type !== 'number') choices.push(fc.integer(), fc.constantFrom(...HUGE_NUMBERS));
  if (type !== 'boolean') choices.push(fc.boolean());
  if (type !== 'array') choices.push(fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 3 }));
  if (type !== 'object')
    choices.push(fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }));
  return fc.oneof(...choices);
}

/** Strings meant to break things: long, unicode (lone surrogates and NUL included), SQL and JSON lookalikes. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 50 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\ud800',
    '💥'.repeat(300),
    "'; DROP TABLE users; --",
    '%_\\',
    '../../etc/passwd',
    '{"a":1}',
    'a'.repeat(10_000),
    'é'.repeat(1001),
    '9'.repeat(400),
  ),
  fc.integer({ min: 1000, max: 70_000 }).map((n) => 'x'.repeat(n)),
);

function idPool(name: string, known: KnownIds): number[] {
  if (/module/.test(name)) return known.module;
  if (/user/.test(name)) return known.user;
  return [...known.user, ...known.module];
}

/** Values that satisfy `schema` (as far as a schema can say; the service may still refuse, e.g. a clash). */
export function validValue(
  document: OpenAPIObject,
  raw: unknown,
  known: KnownIds,
  name = '',
): fc.Arbitrary<unknown> {
  const schema = deref<SchemaObject>(document, raw as SchemaObject);
  let base = validBase(document, schema, known, name);
  // The document's own example is valid by construction, and often the only way past a rule it cannot state
  // as a schema (a configurable pattern, the fields a sort accepts).
  if (schema.example !== undefined && schema.type !== 'object' && !/_ids?$/.test(name)) {
    base = fc.oneof(
      { weight: 2, arbitrary: fc.constant(schema.example as unknown) },
      { weight: 1, arbitrary: base },
    );
  }
  return schema.nullable ? fc.oneof(fc.constant(null), base) : base;
}

function validBase(document: OpenAPIObject, schema: SchemaObject, known: KnownIds, name: string) {
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
  if (schema.allOf?.length === 1) return validValue(document, schema.allOf[0], known, name);
  if (schema.oneOf ?? schema.anyOf) {
    return fc.oneof(...(schema.oneOf ?? schema.anyOf)!.map((s) => validValue(document, s, known, name)));
  }
  switch (schema.type) {
    case 'string': {
      // The service's email schema is a loose pattern (src/users/user-rules.ts): generate real addresses for it.
      if (schema.format === 'email' || schema.pattern === EMAIL_SCHEMA.pattern)
        return fc.emailAddress().filter((e) => e.length <= (schema.maxLength ?? 320));
      const minLength = schema.minLength ?? 0;
      const maxLength = Math.min(schema.maxLength ?? MAX_VALID_STRING, minLength + MAX_VALID_STRING);
      if (schema.pattern) {
        return fc
          .stringMatching(new RegExp(schema.pattern))
          .filter((s) => [...s].length >= minLength && [...s].length <= (schema.maxLength ?? Infinity));
      }
      return fc.string({ minLength, maxLength });
    }
    case 'integer': {
      if (/_ids?$|^id$/.test(name)) {
        const pool = idPool(name, known);
        return pool.length ? fc.oneof(fc.constantFrom(...pool), fc.integer({ min: 1, max: 1e9 })) : fc.nat();
      }
      const min = typeof schema.minimum === 'number' ? schema.minimum : -1000;
      const max = typeof schema.maximum === 'number' ? schema.maximum : min + 100_000;
      return fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31 - 1) });
    }
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum, max: schema.maximum });
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const minLength = schema.minItems ?? 0;
      return fc.array(validValue(document, schema.items ?? {}, known, name), {
        minLength,
        maxLength: Math.max(minLength, Math.min(schema.maxItems ?? MAX_VALID_ITEMS, MAX_VALID_ITEMS)),
      });
    }
    case 'object':
    case undefined: {
      const properties = schema.properties ?? {};
      if (schema.type === undefined && Object.keys(properties).length === 0) {
        return fc.jsonValue({ maxDepth: 2 });
      }
      const model = Object.fromEntries(
        Object.entries(properties).map(([key, sub]) => [key, validValue(document, sub, known, key)]),
      );
      return fc.record(model, { requiredKeys: (schema.required ?? []).filter((k) => k in model) });
    }
    default:
      return fc.jsonValue({ maxDepth: 1 });
  }
}

/** A value of the schema with one thing wrong with it (or a plainly hostile value). */
export function mutatedValue(document: OpenAPIObject, raw: unknown, known: KnownIds): fc.Arbitrary<unknown> {
  const schema = deref<SchemaObject>(document, raw as SchemaObject);
  const valid = validValue(document, schema, known);
  const mutations: fc.Arbitrary<unknown>[] = [
    wrongType(schema),
    fc.constantFrom(...HUGE_NUMBERS),
    nastyString,
  ];
  const properties = Object.keys(schema.properties ?? {});
  if (schema.type === 'object' || properties.length > 0) {
    const record = valid as fc.Arbitrary<Record<string, unknown>>;
    mutations.push(
      // One field of the wrong type, huge, or nasty.
      ...(properties.length
        ? [
            fc.tuple(record, fc.constantFrom(...properties), fc.boolean()).chain(([value, key, deep]) =>
              (deep ? mutatedValue(document, schema.properties![key], known) : wrongType({})).map((bad) => ({
                ...value,
                [key]: bad,
              })),
            ),
          ]
        : []),
      // A required field missing.
      ...(schema.required?.length
        ? [
            fc.tuple(record, fc.constantFrom(...schema.required)).map(([value, key]) => {
              const { [key]: _dropped, ...rest } = value;
              return rest;
            }),
          ]
        : []),
      // Extra fields, including prototype-looking keys.
      fc
        .tuple(
          record,
          fc.dictionary(
            fc.oneof(
              fc.string({ minLength: 1, maxLength: 12 }),
              fc.constantFrom('__proto__', 'constructor', 'id'),
            ),
            fc.jsonValue({ maxDepth: 1 }),
            { minKeys: 1, maxKeys: 3 },
          ),
        )
        .map(([value, extra]) => ({ ...value, ...extra })),
      fc.constant({}),
    );
  }
  if (schema.type === 'array') {
    const items = schema.items ?? {};
    mutations.push(
      fc.constant([]),
      fc.array(mutatedValue(document, items, known), { minLength: 1, maxLength: 3 }),
      // One more than allowed, of cheap items.
      fc.constant(Array.from({ length: (schema.maxItems ?? 1000) + 1 }, (_, i) => i + 1)),
    );
  }
  if (schema.type === 'string') {
    mutations.push(
      fc.constant('x'.repeat((schema.maxLength ?? 1000) + 1)),
      fc.constant(''.padEnd(Math.max(0, (schema.minLength ?? 1) - 1), 'y')),
    );
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    const bounds = [schema.minimum, schema.maximum].filter((b): b is number => typeof b === 'number');
    mutations.push(fc.constantFrom(...bounds.flatMap((b) => [b - 1, b + 1]), -1, 0, 1.5));
  }
  return fc.oneof(...mutations);
}

/** A query or path value: valid (from the schema), or a string a number parser should refuse. */
function parameterValue(
  document: OpenAPIObject,
  parameter: ParameterObject,
  known: KnownIds,
  mutate: boolean,
): fc.Arbitrary<string> {
  const schema = deref<SchemaObject>(document, parameter.schema ?? {});
  if (!mutate) {
    return validValue(document, schema, known, parameter.name).map((v) =>
      typeof v === 'string' ? v : JSON.stringify(v),
    );
  }
  return fc.oneof(
    fc.constantFrom(
      '0',
      '-1',
      '+5',
      '1e3',
      '5.0',
      '0x10',
      '00012',
      '4294967296',
      '9223372036854775807',
      '9223372036854775808',
      '99999999999999999999999',
      'abc',
      'null',
      'true',
      '[1]',
      ' 1',
      '--code',
      'code desc',
      ',,',
      '-',
    ),
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
    nastyString.filter((s) => s.length < 2000),
  );
}

const encode = (value: string) => encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '\ufffd'));

/** The path with its `{param}`s filled in, valid or mutated. */
export function pathArbitrary(
  document: OpenAPIObject,
  op: DocOperation,
  known: KnownIds,
): fc.Arbitrary<string> {
  const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  if (names.length === 0) return fc.constant(op.path);
  const parameters = names.map(
    (name) =>
      (op.operation.parameters ?? [])
        .map((p) => deref<ParameterObject>(document, p))
        .find((p) => p.in === 'path' && p.name === name) ?? {
        name,
        in: 'path' as const,
        schema: { type: 'integer' },
      },
  );
  // Sent as they are, not percent-encoded: broken escapes, an encoded NUL and slash, a 2 KiB id. (No dot
  // segments: fetch resolves even encoded ones, so the request would reach another route.)
  const raw = fc.constantFrom('%', '%E0', '%E0%A4%A', '%ZZ', '1%00', '%2F', '9'.repeat(2048));
  return fc
    .tuple(
      ...parameters.map((p) =>
        fc.oneof(
          { weight: 6, arbitrary: parameterValue(document, p, known, false).map(encode) },
          { weight: 4, arbitrary: parameterValue(document, p, known, true).map(encode) },
          { weight: 1, arbitrary: raw },
        ),
      ),
    )
    .map((values) => names.reduce((path, name, i) => path.replace(`{${name}}`, values[i] || '0'), op.path));
}

/** A query string from the declared query parameters (valid, mutated, repeated) plus unknown ones. */
export function queryArbitrary(
  document: OpenAPIObject,
  op: DocOperation,
  known: KnownIds,
): fc.Arbitrary<string> {
  const declared = (op.operation.parameters ?? [])
    .map((p) => deref<ParameterObject>(document, p))
    .filter((p) => p.in === 'query');
  const pairs = declared.map((p) =>
    fc.option(
      fc
        .oneof(
          { weight: 5, arbitrary: parameterValue(document, p, known, false) },
          { weight: 1, arbitrary: parameterValue(document, p, known, true) },
        )
        .chain((value) =>
          fc.oneof(
            { weight: 5, arbitrary: fc.constant([[p.name, value]]) },
            {
              weight: 1,
              arbitrary: fc.constant([
                [p.name, value],
                [p.name, '1'],
              ]),
            },
          ),
        ),
      { nil: [] as string[][], freq: 2 },
    ),
  );
  const extra = fc.array(fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 8 })), {
    maxLength: 2,
  });
  return fc.tuple(fc.tuple(...pairs), extra).map(([declaredPairs, extraPairs]) => {
    const all = [...declaredPairs.flat(), ...extraPairs] as [string, string][];
    return all.length ? `?${all.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')}` : '';
  });
}

/** A request body: valid, mutated, not an object, not JSON, of another content type, or too large. */
export function bodyArbitrary(
  document: OpenAPIObject,
  op: DocOperation,
  known: KnownIds,
): fc.Arbitrary<{ headers: Record<string, string>; body?: string | Buffer; description: string }> {
  const content = (op.operation.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)
    ?.content;
  const json = (value: unknown, what: string) => ({
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(value),
    description: `${what} ${truncate(JSON.stringify(value))}`,
  });
  const raw = (type: string, body: string, what: string) => ({
    headers: { 'content-type': type },
    body,
    description: `${what} (${type}) ${truncate(body)}`,
  });
  const hostile = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }).map((v) => json(v, 'any JSON')),
    fc.constantFrom(
      raw('application/json', '', 'empty'),
      raw('application/json', '{"a":', 'malformed'),
      raw('application/json', 'null', 'null'),
      raw('application/json', '[]', 'array'),
      raw('text/plain', 'hello', 'text'),
      raw('application/x-www-form-urlencoded', 'a=1', 'form'),
      raw('application/json', `{"padding":"${'x'.repeat(1_100_000)}"}`, 'over 1 MiB'),
    ),
  );
  const multipart = (parts: Parameters<typeof multipartBody>[0], what: string) => {
    const { body, contentType } = multipartBody(parts);
    return { headers: { 'content-type': contentType }, body, description: `multipart ${what}` };
  };
  const files = fc.constantFrom(
    multipart([{}], 'png'),
    multipart([], 'no parts'),
    multipart([{ name: 'avatar' }], 'wrong field name'),
    multipart([{}, {}], 'two files'),
    multipart([{ content: Buffer.alloc(0) }], 'empty file'),
    multipart([{ content: Buffer.from('GIF87a not really') }], 'fake gif'),
    multipart([{ content: Buffer.concat([TINY_PNG, Buffer.alloc(2_097_152)]) }], 'over 2 MiB'),
  );

  if (!content) {
    return fc.oneof(
      { weight: 4, arbitrary: fc.constant({ headers: {}, description: 'no body' }) },
      { weight: 1, arbitrary: hostile },
    );
  }
  const choices: fc.WeightedArbitrary<{
    headers: Record<string, string>;
    body?: string | Buffer;
    description: string;
  }>[] = [{ weight: 1, arbitrary: hostile }];
  if (content['application/json']) {
    const schema = content['application/json'].schema ?? {};
    choices.push(
      { weight: 3, arbitrary: validValue(document, schema, known).map((v) => json(v, 'valid')) },
      { weight: 4, arbitrary: mutatedValue(document, schema, known).map((v) => json(v, 'mutated')) },
    );
  }
  if (content['multipart/form-data']) choices.push({ weight: 4, arbitrary: files });
  if (content['text/csv']) choices.push({ weight: 4, arbitrary: csvBody(content['text/csv'].schema) });
  return fc.oneof(...choices);
}

/** CSV text for import routes: the documented example, shuffled cells, quotes, delimiters, BOMs and NULs. */
function csvBody(schema: unknown) {
  const documented = (schema as { example?: unknown } | undefined)?.example;
  const example = typeof documented === 'string' ? documented : 'a,b\n1,2\n';
  const header = example.split(/\r?\n/)[0];
  const cell = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom('"', '""', '"a,b"', ';', '\u0000', '=1+1', 'Student', 'lecturer', 'true', 'x@y.zz', ''),
  );
  const line = fc
    .array(cell, { maxLength: 5 })
    .chain((cells) => fc.constantFrom(',', ';').map((delimiter) => cells.join(delimiter)));
  const text = fc
    .tuple(
      fc.constantFrom('', '\uFEFF'),
      fc.constantFrom(header, header.toUpperCase(), header.replace(',', ';'), 'nothing,useful'),
      fc.array(line, { maxLength: 6 }),
      fc.constantFrom('\n', '\r\n', '\r'),
    )
    .map(([bom, head, lines, end]) => `${bom}${[head, ...lines].join(end)}${end}`);
  return fc.oneof(fc.constant(example), text).map((body) => ({
    headers: { 'content-type': 'text/csv' },
    body,
    description: `csv ${truncate(JSON.stringify(body))}`,
  }));
}

function truncate(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}… (${text.length} chars)` : text;
}

/** One plain valid value of a schema, from its examples where it has them (deterministic, no fast-check). */
export function exampleValue(document: OpenAPIObject, raw: unknown): unknown {
  const schema = deref<SchemaObject>(document, raw as SchemaObject);
  if (schema.example !== undefined && schema.type !== 'object') return schema.example;
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      return 'a'.repeat(Math.max(3, schema.minLength ?? 0));
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return false;
    case 'object':
    case undefined:
      return Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([key, sub]) => [key, exampleValue(document, sub)]),
      );
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 0) }, () =>
        exampleValue(document, schema.items ?? {}),
      );
    default:
      return null;
  }
}

/** The names of a schema's string properties (one level), where a NUL or other hostile text can go. */
export function stringProperties(document: OpenAPIObject, raw: unknown): string[] {
  const schema = deref<SchemaObject>(document, raw as SchemaObject);
  return Object.entries(schema.properties ?? {})
    .filter(([, sub]) => deref<SchemaObject>(document, sub).type === 'string')
    .map(([key]) => key);
}
