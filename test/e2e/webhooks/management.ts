// Part of test/webhooks.e2e-spec.ts: managing webhooks.
import { type WebhooksContext } from './context.js';
import { failure } from '../../support/http.js';

export function managementTests(ctx: WebhooksContext): void {
  const { app, api, create, given } = ctx;

  describe('management', () => {
    it('creates a webhook and shows its secret in that answer only', async () => {
      const res = await create({
        url: 'http://127.0.0.1:9/hook',
        types: ['module.created'],
        description: 'LMS',
      });
      expect(res.status).toBe(201);
      expect(res.body.message).toBe('Webhook created');
      const { secret, ...webhook } = res.body.data;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(24);
      expect(webhook).toEqual({
        id: expect.any(Number),
        url: 'http://127.0.0.1:9/hook',
        types: ['module.created'],
        description: 'LMS',
        enabled: true,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updated_at: expect.any(String),
        failing_since: null,
      });

      const read = await api.get(`/api/webhooks/${webhook.id}`, { token: given.token });
      expect(read.status).toBe(200);
      expect(read.body).toEqual({ success: true, data: webhook, message: 'Webhook retrieved successfully' });
      const list = await api.get('/api/webhooks', { token: given.token });
      expect(list.body.data).toEqual({ webhooks: [webhook], page: 1, per_page: 20, total: 1 });
      const updated = await api.put(`/api/webhooks/${webhook.id}`, {
        token: given.token,
        body: { description: null },
      });
      expect(updated.body.data.secret).toBeUndefined();
      // Neither the answers nor the audit trail ever carry the secret again.
      const audit = await api.get('/api/audit?target_type=webhook', { token: given.token });
      const everything = JSON.stringify([read.body, list.body, updated.body, audit.body]);
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice(6));
    });

    it('stores ["*"] alone for all types and drops repeated types', async () => {
      const all = await create({ url: 'http://127.0.0.1:9/a', types: ['module.created', '*'] });
      expect(all.body.data.types).toEqual(['*']);
      const some = await create({ url: 'http://127.0.0.1:9/b', types: ['user.deleted', 'user.deleted'] });
      expect(some.body.data.types).toEqual(['user.deleted']);
    });

    it.each([
      [{ types: ['*'] }, 'url must be an absolute http(s) URL of at most 2048 characters'],
      [{ url: 'not a url', types: ['*'] }, 'url must be an absolute http(s) URL of at most 2048 characters'],
      [{ url: 42, types: ['*'] }, 'url must be an absolute http(s) URL of at most 2048 characters'],
      [
        { url: `http://127.0.0.1/${'x'.repeat(2040)}`, types: ['*'] },
        'url must be an absolute http(s) URL of at most 2048 characters',
      ],
      // Another scheme, credentials, a control character anywhere: a URL that is not allowed.
      [{ url: 'ftp://example.edu/x', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'file:///etc/passwd', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'http://127.0.0.1/a\u0000b', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'http://127.0.0.1\u0000.evil/x', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'http://127.0.0.1/a\tb', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'http://127.0.0.1/a\u001bb', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'http://127.0.0.1/a\u0085b', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'http://user:secret@127.0.0.1/x', types: ['*'] }, 'Webhook URL is not allowed'],
      [{ url: 'https://example.edu/x' }, 'types must be a non-empty array of at most 16 event types'],
      [
        { url: 'https://example.edu/x', types: [] },
        'types must be a non-empty array of at most 16 event types',
      ],
      [
        { url: 'https://example.edu/x', types: 'module.created' },
        'types must be a non-empty array of at most 16 event types',
      ],
      [{ url: 'https://example.edu/x', types: ['module.exploded'] }, 'Invalid event type'],
      [{ url: 'https://example.edu/x', types: ['webhook.test'] }, 'Invalid event type'],
      [
        { url: 'https://example.edu/x', types: ['*'], description: 'x'.repeat(501) },
        'description must be a string of at most 500 characters, or null',
      ],
      [{ url: 'https://example.edu/x', types: ['*'], secret: 'mine' }, 'property secret should not exist'],
    ])('refuses %j with 400 and creates nothing', async (body, message) => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message });
      expect((await api.get('/api/webhooks', { token: given.token })).body.data.total).toBe(0);
    });

    it('updates fields, clears failing_since when turned on again, and audits only what changed', async () => {
      const { id } = (await create({ url: 'http://127.0.0.1:9/a', types: ['*'] })).body.data;
      await app.dataSource.query(`UPDATE webhooks SET enabled = false, failing_since = now() WHERE id = $1`, [
        id,
      ]);
      const res = await api.put(`/api/webhooks/${id}`, {
        token: given.token,
        body: { enabled: true, types: ['user.created'], url: 'http://127.0.0.1:9/a' },
      });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Webhook updated successfully');
      expect(res.body.data).toMatchObject({ enabled: true, types: ['user.created'], failing_since: null });
      const [event] = (await api.get('/api/audit?action=webhook.update', { token: given.token })).body.data
        .events;
      expect(event.summary).toEqual({
        types: { from: ['*'], to: ['user.created'] },
        enabled: { from: false, to: true },
      });
      expect((await api.put(`/api/webhooks/${id}`, { token: given.token, body: {} })).body.message).toBe(
        'At least one field must be provided',
      );
      expect(
        (await api.put(`/api/webhooks/${id}`, { token: given.token, body: { enabled: 'yes' } })).body.message,
      ).toBe('enabled must be true or false');
      expect(
        (await api.put(`/api/webhooks/999999`, { token: given.token, body: { enabled: true } })).status,
      ).toBe(404);
    });

    it('deletes a webhook with its log and audits it; an unknown id is 404', async () => {
      const { id } = (await create({ url: 'http://127.0.0.1:9/a', types: ['*'] })).body.data;
      const res = await api.delete(`/api/webhooks/${id}`, { token: given.token });
      expect(res.body).toEqual({ success: true, data: null, message: 'Webhook deleted successfully' });
      expect((await api.get(`/api/webhooks/${id}`, { token: given.token })).body).toEqual(
        failure('Webhook not found'),
      );
      expect((await api.delete(`/api/webhooks/${id}`, { token: given.token })).status).toBe(404);
      const actions = (await api.get('/api/audit?target_type=webhook&sort=at', { token: given.token })).body
        .data.events;
      expect(actions.map((event: any) => [event.action, event.summary])).toEqual([
        ['webhook.create', { url: 'http://127.0.0.1:9/a', types: ['*'], enabled: true }],
        ['webhook.delete', { url: 'http://127.0.0.1:9/a', types: ['*'], enabled: true }],
      ]);
    });

    it('keeps webhook URLs in the audit trail without their query string (a token there is not kept a year)', async () => {
      const secretUrl = 'http://127.0.0.1:9/hook?token=s3cr3t&x=1#frag';
      const { id } = (await create({ url: secretUrl, types: ['*'] })).body.data;
      expect((await api.get(`/api/webhooks/${id}`, { token: given.token })).body.data.url).toBe(secretUrl);
      await api.put(`/api/webhooks/${id}`, {
        token: given.token,
        body: { url: 'http://127.0.0.1:9/other?key=k2' },
      });
      await api.delete(`/api/webhooks/${id}`, { token: given.token });
      const events = (await api.get('/api/audit?target_type=webhook&sort=at', { token: given.token })).body
        .data.events;
      expect(events.map((event: any) => [event.action, event.summary])).toEqual([
        ['webhook.create', { url: 'http://127.0.0.1:9/hook', types: ['*'], enabled: true }],
        ['webhook.update', { url: { from: 'http://127.0.0.1:9/hook', to: 'http://127.0.0.1:9/other' } }],
        ['webhook.delete', { url: 'http://127.0.0.1:9/other', types: ['*'], enabled: true }],
      ]);
      expect(JSON.stringify(events)).not.toMatch(/s3cr3t|k2/);
    });
  });
}
