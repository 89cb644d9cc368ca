// Part of test/scim.e2e-spec.ts: SCIM switched off.
import { type UsedTestApp } from '../../support/app.js';
import { request } from '../../support/http.js';
import { makeScimToken, SCIM } from '../../support/scim.js';

export function scimSwitchedOff({ app }: UsedTestApp): void {
  it('leaves the SCIM routes out of the OpenAPI document', async () => {
    const document = (await request(app.url, 'GET', '/api/docs-json')).body;
    expect(Object.keys(document.paths).filter((path) => path.includes('scim'))).toEqual([]);
  });

  it('answers every SCIM path 404 Route not found in the envelope', async () => {
    await app.dataSource.query('TRUNCATE integration_tokens');
    const token = await makeScimToken(app.dataSource);
    for (const path of ['/Users', '/ServiceProviderConfig', '/Groups', '/Users/1']) {
      const res = await request(app.url, 'GET', `${SCIM}${path}`, { token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, data: null, message: 'Route not found' });
    }
  });
}
