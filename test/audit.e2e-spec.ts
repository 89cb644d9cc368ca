import { AuditService } from '../src/audit/audit.service.js';
import { failure } from './support/modules-fixtures.js';
import { useTestApp } from './support/app.js';
import { makeUser, tokenFor, type UserRow } from './support/factories.js';

describe('Audit trail (GET /api/audit)', () => {
  const { app, api } = useTestApp();
  let admin: UserRow;
  let token: string;

  const insert = (
    at: string,
    actor: number | null,
    action: string,
    targetType: string | null,
    targets: number[],
  ) =>
    app.dataSource.query(
      `INSERT INTO audit_events (at, actor_id, action, target_type, target_ids, summary, request_id, client_ip)
       VALUES ($1, $2, $3, $4, $5::bigint[], '{"k":1}', 'req-1', '10.0.0.1')`,
      [at, actor, action, targetType, targets],
    );

  beforeEach(async () => {
    await app.reset();
    admin = await makeUser(app.dataSource, { admin: true, username: 'root' });
    token = tokenFor(admin);
    await insert('2026-01-01T00:00:00.000Z', admin.id, 'module.create', 'module', [10]);
    await insert('2026-02-01T00:00:00.000Z', admin.id, 'user.bulk_create', 'user', [20, 21]);
    await insert('2026-03-01T00:00:00.000Z', null, 'auth.login_failed', 'user', [21]);
    await insert('2026-03-01T00:00:00.000Z', null, 'auth.login_throttled', null, []);
  });

  const list = (query = '') => api.get(`/api/audit${query}`, { token });
  const actions = (res: { body: { data: { events: { action: string }[] } } }) =>
    res.body.data.events.map((event) => event.action);

  it('pages events newest first, ties broken by id descending', async () => {
    const res = await list('?per_page=2');
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Audit events retrieved successfully');
    expect(res.body.data).toMatchObject({ page: 1, per_page: 2, total: 4 });
    expect(res.body.data.events[0]).toEqual({
      id: expect.any(Number),
      at: '2026-03-01T00:00:00.000Z',
      actor_id: null,
      action: 'auth.login_throttled',
      target_type: null,
      target_ids: [],
      summary: { k: 1 },
      request_id: 'req-1',
      client_ip: '10.0.0.1',
    });
    expect(actions(res)).toEqual(['auth.login_throttled', 'auth.login_failed']);
    expect(actions(await list('?sort=at'))).toEqual([
      'module.create',
      'user.bulk_create',
      'auth.login_failed',
      'auth.login_throttled',
    ]);
    expect((await list('?page=3&per_page=2')).body.data).toMatchObject({ events: [], total: 4, page: 3 });
  });

  it('filters by actor, actions, target and time range, combined with AND', async () => {
    expect(actions(await list(`?actor_id=${admin.id}`))).toEqual(['user.bulk_create', 'module.create']);
    expect(actions(await list('?action=module.create, auth.login_failed'))).toEqual([
      'auth.login_failed',
      'module.create',
    ]);
    expect(actions(await list('?target_type=user&target_id=21'))).toEqual([
      'auth.login_failed',
      'user.bulk_create',
    ]);
    expect(actions(await list('?from=2026-01-15T00:00:00Z&to=2026-02-15T00:00:00%2B01:00'))).toEqual([
      'user.bulk_create',
    ]);
    expect((await list(`?actor_id=${admin.id}&target_type=module`)).body.data.total).toBe(1);
  });

  it.each([
    ['?action=module.explode', 'Invalid audit action'],
    ['?action=module.create,nope', 'Invalid audit action'],
    ['?from=yesterday', 'from must be an RFC 3339 timestamp'],
    ['?to=2026-13-01T00:00:00Z', 'to must be an RFC 3339 timestamp'],
    ['?actor_id=abc', 'actor_id must be a positive integer'],
    ['?target_type=assignment', 'target_type must be one of module, user, webhook, token'],
    ['?sort=action', 'Invalid field used for sorting'],
    ['?per_page=x', 'per_page must be an integer'],
  ])('answers 400 to %s', async (query, message) => {
    expect(await list(query)).toMatchObject({ status: 400, body: failure(message) });
  });

  it('is for admins only, and offers no way to change or delete events', async () => {
    const user = await makeUser(app.dataSource);
    expect(await api.get('/api/audit', { token: tokenFor(user) })).toMatchObject({ status: 403 });
    expect(await api.get('/api/audit')).toMatchObject({ status: 401 });
    for (const method of ['POST', 'PUT', 'DELETE'])
      expect(await api.request(method, '/api/audit', { token, body: {} })).toMatchObject({
        status: 404,
        body: failure('Route not found'),
      });
  });

  it('prunes events older than the retention period', async () => {
    const audit = app.service.app.get(AuditService);
    await insert(new Date(Date.now() - 400 * 86_400_000).toISOString(), null, 'user.create', 'user', [1]);
    await insert(new Date(Date.now() - 10 * 86_400_000).toISOString(), null, 'user.delete', 'user', [1]);
    const before = (await list()).body.data.total;
    const pruned = await audit.prune(new Date());
    const after = (await list()).body.data.total;
    expect(before - after).toBe(pruned);
    expect(actions(await list('?action=user.create,user.delete'))).toEqual(['user.delete']);
  });
});

describe('Audit retention of 0 days', () => {
  const { app } = useTestApp({ auditRetentionDays: 0 });

  it('keeps every event', async () => {
    await app.reset();
    await app.dataSource.query(
      `INSERT INTO audit_events (at, action) VALUES (now() - interval '20 years', 'user.create')`,
    );
    expect(await app.service.app.get(AuditService).prune()).toBe(0);
    expect((await app.dataSource.query(`SELECT count(*) AS n FROM audit_events`))[0].n).toBe(1);
  });
});
