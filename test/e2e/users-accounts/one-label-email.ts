// Part of test/users-accounts.e2e-spec.ts: an email address with a one-label domain.
import { type UsedTestApp } from '../../support/app.js';
import { DEFAULT_PASSWORD, makeUser, tokenFor } from '../../support/factories.js';
import { failure } from '../../support/http.js';
import { conformingClient, DocumentValidator, fetchDocument } from '../../support/openapi.js';

/**
 * An address whose domain is one label, such as the first administrator's default `admin@localhost`
 * (ADMIN_EMAIL): the service accepts it wherever it takes an email, and the document's schemas describe it, so a
 * validator driven by the document (Prism, Portman) does not refuse the service's own answers.
 */
export function oneLabelEmailTests({ app }: UsedTestApp): void {
  let validator: DocumentValidator;

  beforeAll(async () => {
    validator = new DocumentValidator(await fetchDocument(app.url));
  });
  beforeEach(() => app.reset());

  it('is kept when the first administrator saves it again, taken for a new user, and valid in the document', async () => {
    const api = conformingClient(app.url, validator);
    const admin = await makeUser(app.dataSource, {
      username: 'admin',
      email: 'admin@localhost',
      admin: true,
    });
    const token = tokenFor(admin);

    const saved = await api.request('PUT', `/api/users/${admin.id}`, {
      token,
      body: { email: 'admin@localhost' },
    });
    expect(saved.status).toBe(200);
    expect(saved.body.data.email).toBe('admin@localhost');

    const created = await api.request('POST', '/api/users', {
      token,
      body: { username: 'ops', email: 'Ops@Intranet', password: DEFAULT_PASSWORD },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.email).toBe('ops@intranet');

    expect((await api.request('GET', '/api/auth/me', { token })).status).toBe(200);
    expect((await api.request('GET', `/api/users/${admin.id}`, { token })).status).toBe(200);
    expect(api.problems).toEqual([]);
  });

  it.each(['admin@', '@localhost', 'admin', 'ad min@localhost', 'admin@local host', 'admin@@localhost'])(
    'still refuses %j with the email message',
    async (email) => {
      const admin = await makeUser(app.dataSource, { admin: true });
      const res = await conformingClient(app.url, validator).request('PUT', `/api/users/${admin.id}`, {
        token: tokenFor(admin),
        body: { email },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failure('Email must be a valid email address'));
    },
  );
}
