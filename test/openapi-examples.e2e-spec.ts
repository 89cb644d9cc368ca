import { startTestApp, type TestApp } from './support/app.js';
import { makeUser } from './support/factories.js';
import { client } from './support/http.js';
import { multipartBody, TINY_PNG } from './support/openapi-requests.js';

type Schema = {
  $ref?: string;
  example?: unknown;
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
};
interface Operation {
  parameters?: { in: string; name: string; schema?: Schema; example?: unknown }[];
  requestBody?: { content: Record<string, { schema: Schema; example?: unknown }> };
}

type Media = 'application/json' | 'text/csv' | 'multipart/form-data';
const JSON_BODY: Media = 'application/json';

/**
 * The request bodies Swagger UI offers in "Try it out", run as they are on a fresh installation (the admin is
 * user 1; the examples create user 2 `jsmith`, users 3 and 4 `adoe` and `bkhan`, and module 1 `CSC101`, which the
 * later examples and the path examples name). Each must pass validation and succeed, in the order an
 * administrator works. A CSV route runs twice, its example as the body and as the multipart part `file`; the
 * avatar, whose only body is a file to choose, gets a small PNG.
 */
const SESSION: [method: string, path: string, status: number, media?: Media][] = [
  ['post', '/api/auth/login', 200],
  ['post', '/api/users', 201],
  ['post', '/api/users/bulk', 201],
  ['post', '/api/modules', 201],
  ['put', '/api/modules/{module_id}', 200],
  ['post', '/api/modules/{module_id}/personnel', 200],
  ['post', '/api/modules/rollover', 201],
  ['delete', '/api/modules/{module_id}/personnel', 200],
  ['post', '/api/modules/{module_id}/students', 200],
  ['patch', '/api/modules/{module_id}/members', 200],
  ['delete', '/api/modules/{module_id}/students', 200],
  ['post', '/api/users/import', 201, 'text/csv'],
  ['post', '/api/users/import', 201, 'multipart/form-data'],
  ['post', '/api/modules/{module_id}/roster/import', 200, 'text/csv'],
  ['post', '/api/modules/{module_id}/roster/import', 200, 'multipart/form-data'],
  ['put', '/api/users/{user_id}/avatar', 200, 'multipart/form-data'],
  ['put', '/api/users/{user_id}', 200],
  ['delete', '/api/modules/bulk', 200],
  ['post', '/api/webhooks', 201],
  ['put', '/api/webhooks/{webhook_id}', 200],
  ['put', '/api/auth/password', 200],
  // Last: its answer's `token` is an integration token, which the steps above could not use.
  ['post', '/api/tokens', 201],
];

describe('the request examples of the OpenAPI document succeed on a fresh installation', () => {
  let app: TestApp;
  let document: {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, Schema> };
  };

  beforeAll(async () => {
    app = await startTestApp();
    document = (await client(app.url).get('/api/docs-json')).body;
  });
  afterAll(async () => {
    await app?.close();
  });

  /** What Swagger UI fills in: the schema's example, else one built from its properties' (or items') examples. */
  function sample(schema: Schema): unknown {
    if (schema.$ref) return sample(document.components.schemas[schema.$ref.split('/').pop()!]);
    if (schema.example !== undefined) return schema.example;
    if (schema.properties) {
      return Object.fromEntries(
        Object.entries(schema.properties).map(([name, property]) => [name, sample(property)]),
      );
    }
    if (schema.type === 'array' && schema.items) return [sample(schema.items)];
    throw new Error(`no example for ${JSON.stringify(schema)}`);
  }

  /** What Swagger UI sends for `media`: the JSON or CSV example, or a file part holding it (or a PNG). */
  function requestOf(operation: Operation, media: Media): { body: string | Uint8Array; contentType: string } {
    const content = operation.requestBody!.content;
    if (media === JSON_BODY) {
      return {
        body: JSON.stringify(content[media].example ?? sample(content[media].schema)),
        contentType: media,
      };
    }
    const csv = content['text/csv'];
    const text = csv ? String(csv.example ?? sample(csv.schema)) : undefined;
    if (media === 'text/csv') return { body: text!, contentType: media };
    const { body, contentType } = multipartBody([
      text
        ? { filename: 'example.csv', type: 'text/csv', content: Buffer.from(text) }
        : { filename: 'avatar.png', type: 'image/png', content: TINY_PNG },
    ]);
    return { body: new Uint8Array(body), contentType };
  }

  it('every request body has an example, and the session of examples succeeds step by step', async () => {
    const withBody = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        Object.keys(operation.requestBody?.content ?? {}).map((media) => `${method} ${path} ${media}`),
      ),
    );
    expect(SESSION.map(([method, path, , media = JSON_BODY]) => `${method} ${path} ${media}`).sort()).toEqual(
      withBody.sort(),
    );

    await app.dataSource.query(
      'TRUNCATE assignment_files, assignments, user_module_roles, modules, users, webhooks RESTART IDENTITY CASCADE',
    );
    const admin = await makeUser(app.dataSource, { username: 'admin', admin: true });
    expect(Number(admin.id)).toBe(1);

    let token = '';
    for (const [method, path, status, media = JSON_BODY] of SESSION) {
      const operation = document.paths[path][method];
      let url = path;
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'path') continue;
        url = url.replace(`{${parameter.name}}`, String(parameter.example ?? parameter.schema?.example));
      }
      const { body, contentType } = requestOf(operation, media);
      const response = await fetch(`${app.url}${url}`, {
        method: method.toUpperCase(),
        headers: { 'content-type': contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body,
      });
      const answer = (await response.json()) as { success: boolean; data?: { token?: string } };
      expect({
        step: `${method} ${url} (${media})`,
        body: typeof body === 'string' ? body : '(file)',
        status: response.status,
        answer,
      }).toMatchObject({
        status,
        answer: { success: true },
      });
      if (answer.data?.token) token = answer.data.token;
    }
  });
});
