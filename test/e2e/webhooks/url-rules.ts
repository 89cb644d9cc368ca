// Part of test/webhooks.e2e-spec.ts: webhook URL rules in production mode.
import { jest } from '@jest/globals';
import { HostResolver } from '../../../src/webhooks/webhook-url.js';
import { type UsedTestApp } from '../../support/app.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { eventually, startReceiver } from '../../support/webhook-receiver.js';

export function urlRulesInProduction({ app, api }: UsedTestApp): void {
  let token: string;

  beforeEach(async () => {
    ({ token } = await freshAdmin(app));
  });
  afterEach(() => jest.restoreAllMocks());

  const create = (url: string) => api.post('/api/webhooks', { token, body: { url, types: ['*'] } });

  it.each([
    'http://93.184.216.34/hook',
    'https://localhost/hook',
    'https://127.0.0.1/hook',
    'https://0.0.0.0/hook',
    'https://10.0.0.5/hook',
    'https://172.20.1.1/hook',
    'https://192.168.0.10/hook',
    'https://100.64.1.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:a9fe:a9fe]/hook',
    'https://[::ffff:0:127.0.0.1]/hook',
    'https://[::ffff:0:a9fe:a9fe]/hook',
    'https://[64:ff9b::a9fe:a9fe]/hook',
    'https://[64:ff9b:1::a9fe:a9fe]/hook',
    'https://[64:ff9b:1:a9fe:a9:fe00::]/hook',
    'https://[fd00::1]/hook',
    'https://[fe80::1]/hook',
    'https://224.0.0.1/hook',
    'https://user:pass@93.184.216.34/hook',
  ])('refuses %s with 400 Webhook URL is not allowed', async (url) => {
    const res = await create(url);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, data: null, message: 'Webhook URL is not allowed' });
  });

  it('refuses a host name that resolves to a private address, on create and on update', async () => {
    const resolver = app.service.app.get(HostResolver);
    jest.spyOn(resolver, 'resolve').mockImplementation((host) =>
      Promise.resolve(
        host === 'intranet.example.edu'
          ? [
              { address: '93.184.216.34', family: 4 },
              { address: '10.1.2.3', family: 4 },
            ]
          : [{ address: '93.184.216.34', family: 4 }],
      ),
    );
    expect((await create('https://intranet.example.edu/hook')).body.message).toBe(
      'Webhook URL is not allowed',
    );
    const ok = await create('https://public.example.edu/hook');
    expect(ok.status).toBe(201);
    const res = await api.put(`/api/webhooks/${ok.body.data.id}`, {
      token,
      body: { url: 'https://intranet.example.edu/hook' },
    });
    expect(res.body.message).toBe('Webhook URL is not allowed');
    expect((await api.get(`/api/webhooks/${ok.body.data.id}`, { token })).body.data.url).toBe(
      'https://public.example.edu/hook',
    );
  });

  it('checks the address again at delivery: a host that resolved public at create and private now is not contacted', async () => {
    const target = await startReceiver();
    try {
      const resolver = app.service.app.get(HostResolver);
      const lookup = jest
        .spyOn(resolver, 'resolve')
        .mockResolvedValueOnce([{ address: '93.184.216.34', family: 4 }])
        .mockResolvedValue([{ address: '127.0.0.1', family: 4 }]);
      const created = await create(`https://rebind.example.edu:${target.port}/hook`);
      expect(created.status).toBe(201);
      await api.post(`/api/webhooks/${created.body.data.id}/test`, { token });
      const rows = await eventually(async () => {
        const found = (await api.get(`/api/webhooks/${created.body.data.id}/deliveries`, { token })).body.data
          .deliveries;
        return found.length > 0 ? (found as any[]) : undefined;
      });
      expect(rows.at(-1)).toMatchObject({
        attempt: 1,
        status_code: null,
        error: 'Webhook URL is not allowed',
      });
      expect(rows.every((row) => row.error === 'Webhook URL is not allowed')).toBe(true);
      expect(lookup.mock.calls.every(([host]) => host === 'rebind.example.edu')).toBe(true);
      expect(lookup.mock.calls.length).toBeGreaterThanOrEqual(2);
      expect(target.received).toHaveLength(0);
    } finally {
      await target.close();
    }
  });
}
