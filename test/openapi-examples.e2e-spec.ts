import { startTestApp, type TestApp } from './support/app.js';
import { makeUser } from './support/factories.js';
import { client } from './support/http.js';

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

/**
 * The request bodies Swagger UI offers in "Try it out", run as they are on a fresh installation (the admin is
 * user 1; the examples create user 2 `jsmith` and module 1 `CSC101`, which the later examples and the path
 * examples name). Each must pass validation and succeed, in the order an administrator works.
 */
const SESSION: [method: string, path: string, status: number][] = [
  ['post', '/api/auth/login', 200],
  ['post', '/api/users', 201],
  ['post', '/api/users/bulk', 201],
  ['post', '/api/modules', 201],
  ['put', '/api/modules/{module_id}', 200],
  ['post', '/api/modules/{module_id}/personnel', 200],
  ['post', '/api/modules/rollover', 201],
  ['delete', '/api/modules/{module_id}/personnel', 200],
  ['post', '/api/modules/{module_id}/students', 200],
  ['delete', '/api/modules/{module_id}/students', 200],
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

  it('every JSON request body has an example, and the session of examples succeeds step by step', async () => {
    const withJsonBody = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation.requestBody?.content['application/json'])
        .map(([method]) => `${method} ${path}`),
    );
    expect(SESSION.map(([method, path]) => `${method} ${path}`).sort()).toEqual(withJsonBody.sort());

    await app.dataSource.query(
      'TRUNCATE assignment_files, assignments, user_module_roles, modules, users, webhooks RESTART IDENTITY CASCADE',
    );
    const admin = await makeUser(app.dataSource, { username: 'admin', admin: true });
    expect(Number(admin.id)).toBe(1);

    let token = '';
    for (const [method, path, status] of SESSION) {
      const operation = document.paths[path][method];
      let url = path;
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'path') continue;
        url = url.replace(`{${parameter.name}}`, String(parameter.example ?? parameter.schema?.example));
      }
      const media = operation.requestBody!.content['application/json'];
      const body = media.example ?? sample(media.schema);
      const response = await client(app.url).request(method.toUpperCase(), url, { body, token });
      expect({
        step: `${method} ${url}`,
        body,
        status: response.status,
        answer: response.body,
      }).toMatchObject({
        status,
        answer: { success: true },
      });
      if (response.body.data?.token) token = response.body.data.token;
    }
  });
});
