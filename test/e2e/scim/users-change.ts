// Part of test/scim.e2e-spec.ts: replacing, patching and deleting Users, and what SCIM may not change.
import pg from 'pg';
import { testDatabaseUrl } from '../../support/app.js';
import { makeUser, tokenFor } from '../../support/factories.js';
import { request } from '../../support/http.js';
import { patchBody, scimError, USER_SCHEMA } from '../../support/scim.js';
import { waitFor } from '../../support/wait-for.js';
import { type ScimContext } from './context.js';

export function userChangeTests(ctx: ScimContext): void {
  const { app, scim, createJane, patchUser } = ctx;

  it('replaces with PUT: omitted optional attributes become null, an omitted active stays', async () => {
    const { id } = await createJane();
    await patchUser(id, { op: 'replace', path: 'active', value: false });
    const res = await scim({
      method: 'PUT',
      path: `/Users/${id}`,
      body: { schemas: [USER_SCHEMA], userName: 'jane.doe@uni.edu', emails: [{ value: 'jane@uni.edu' }] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      userName: 'jane.doe@uni.edu',
      active: false,
      emails: [{ value: 'jane@uni.edu' }],
    });
    expect(res.body).not.toHaveProperty('name');
    expect(res.body).not.toHaveProperty('displayName');
    expect(res.body).not.toHaveProperty('externalId');
    const missing = await scim({
      method: 'PUT',
      path: `/Users/${id}`,
      body: { emails: [{ value: 'j@uni.edu' }] },
    });
    expect(missing.body).toEqual(scimError(400, 'userName is required', 'invalidValue'));
    const noEmail = await scim({ method: 'PUT', path: `/Users/${id}`, body: { userName: 'jane' } });
    expect(noEmail.body).toEqual(
      scimError(400, 'A user needs an email address (emails[].value)', 'invalidValue'),
    );
  });

  it('applies PATCH operations all or nothing, and a PATCH that changes nothing writes no audit and no event', async () => {
    const { id } = await createJane();
    const failing = await patchUser(
      id,
      { op: 'replace', path: 'displayName', value: 'Changed' },
      { op: 'replace', path: 'userName', value: 'not valid!' },
    );
    expect(failing.status).toBe(400);
    expect((await scim({ method: 'GET', path: `/Users/${id}` })).body.displayName).toBe('Jane Doe');

    const [{ n: auditBefore }] = await app.dataSource.query('SELECT count(*)::int AS n FROM audit_events');
    const [{ n: eventsBefore }] = await app.dataSource.query('SELECT count(*)::int AS n FROM change_events');
    const same = await patchUser(
      id,
      { op: 'Replace', path: 'displayName', value: 'Jane Doe' },
      { op: 'Add', path: 'emails[type eq "work"].value', value: 'JANE.DOE@uni.edu' },
      { op: 'replace', value: { 'name.givenName': 'Jane', active: 'True', title: 'Dr' } },
    );
    expect(same.status).toBe(200);
    expect(await app.dataSource.query('SELECT count(*)::int AS n FROM audit_events')).toEqual([
      { n: auditBefore },
    ]);
    expect(await app.dataSource.query('SELECT count(*)::int AS n FROM change_events')).toEqual([
      { n: eventsBefore },
    ]);
  });

  it('applies every documented path, path-less objects with dotted keys or nested objects, and removes', async () => {
    const { id } = await createJane();
    const patch = async (...operations: unknown[]) => {
      const res = await patchUser(id, ...operations);
      expect(res.status).toBe(200);
      return res.body;
    };
    expect(await patch({ op: 'replace', path: 'name.familyName', value: 'Smith' })).toMatchObject({
      name: { givenName: 'Jane', familyName: 'Smith' },
    });
    expect(await patch({ op: 'replace', path: 'name', value: { givenName: 'Janet' } })).toMatchObject({
      name: { givenName: 'Janet', familyName: 'Smith' },
    });
    expect(
      await patch({ op: 'replace', value: { name: { familyName: 'Doe' }, displayName: 'JD' } }),
    ).toMatchObject({
      name: { givenName: 'Janet', familyName: 'Doe' },
      displayName: 'JD',
    });
    expect(
      await patch({ op: 'add', path: 'emails[primary eq true].value', value: 'jd@uni.edu' }),
    ).toMatchObject({
      emails: [{ value: 'jd@uni.edu' }],
    });
    expect(
      await patch({ op: 'replace', path: 'emails', value: [{ value: 'p@uni.edu', primary: true }] }),
    ).toMatchObject({
      emails: [{ value: 'p@uni.edu' }],
    });
    expect(await patch({ op: 'replace', path: 'externalId', value: 'new-ext' })).toMatchObject({
      externalId: 'new-ext',
    });
    expect(await patch({ op: 'replace', path: 'userName', value: 'janet.doe@uni.edu' })).toMatchObject({
      userName: 'janet.doe@uni.edu',
    });
    const removed = await patch(
      { op: 'remove', path: 'displayName' },
      { op: 'Remove', path: 'name.givenName' },
      { op: 'remove', path: 'externalId' },
    );
    expect(removed).not.toHaveProperty('displayName');
    expect(removed).not.toHaveProperty('externalId');
    expect(removed.name).toEqual({ familyName: 'Doe', formatted: 'Doe' });
    expect(await patch({ op: 'remove', path: 'name' })).not.toHaveProperty('name');
    // Paths the service does not keep change nothing.
    expect(
      await patch(
        {
          op: 'add',
          path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
          value: 'CS',
        },
        { op: 'replace', path: 'emails[type eq "home"].value', value: 'home@x.org' },
        { op: 'add', path: 'phoneNumbers[type eq "work"].value', value: '123' },
      ),
    ).toMatchObject({ emails: [{ value: 'p@uni.edu' }] });
    const noEmail = await patchUser(id, { op: 'remove', path: 'emails' });
    expect(noEmail.body).toEqual(
      scimError(400, 'A user needs an email address (emails[].value)', 'invalidValue'),
    );
  });

  it('deletes with 204 and an empty body, like DELETE /api/users/{id}', async () => {
    const { id } = await createJane();
    const res = await scim({ method: 'DELETE', path: `/Users/${id}` });
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect(await app.dataSource.query('SELECT id FROM users WHERE id = $1', [id])).toEqual([]);
    expect((await scim({ method: 'DELETE', path: `/Users/${id}` })).status).toBe(404);
  });

  it('never undoes an admin deactivation committed while a SCIM rename waits: renamed and inactive', async () => {
    const { id } = await createJane();
    const admin = await makeUser(app.dataSource, { admin: true });
    const holder = new pg.Client({ connectionString: testDatabaseUrl() });
    await holder.connect();
    const lockWaiters = async () => {
      const [{ n }] = await app.dataSource.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return n;
    };
    try {
      // Another session holds the row: the admin's deactivation queues first, the SCIM rename behind it.
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [id]);
      const deactivation = request(app.url, 'PUT', `/api/users/${id}`, {
        token: tokenFor(admin),
        body: { active: false },
      });
      await waitFor(async () => (await lockWaiters()) === 1, { what: 'the deactivation waiting' });
      const rename = patchUser(id, { op: 'replace', path: 'userName', value: 'jane.smith@uni.edu' });
      await waitFor(async () => (await lockWaiters()) === 2, { what: 'the rename waiting behind it' });
      await holder.query('COMMIT');
      expect((await deactivation).status).toBe(200);
      expect((await rename).status).toBe(200);
    } finally {
      await holder.end();
    }
    expect(await app.dataSource.query('SELECT username, active FROM users WHERE id = $1', [id])).toEqual([
      { username: 'jane.smith@uni.edu', active: false },
    ]);
    const audit = await app.dataSource.query<{ summary: Record<string, unknown> }[]>(
      `SELECT summary FROM audit_events WHERE action = 'user.update' ORDER BY id`,
    );
    expect(audit.map((entry) => Object.keys(entry.summary).sort())).toEqual([
      ['active'],
      ['token_id', 'username', 'via'],
    ]);
  });

  it('takes the email rule of the user routes: an address on a one-label domain (admin@localhost)', async () => {
    const res = await scim({
      method: 'POST',
      path: '/Users',
      body: { userName: 'ops', emails: [{ value: 'ops@localhost' }] },
    });
    expect(res.status).toBe(201);
    expect(res.body.emails).toEqual([{ value: 'ops@localhost', type: 'work', primary: true }]);
    const replaced = await scim({
      method: 'PUT',
      path: `/Users/${String(res.body.id)}`,
      body: { userName: 'ops', emails: [{ value: 'root@localhost' }] },
    });
    expect(replaced.body.emails).toEqual([{ value: 'root@localhost', type: 'work', primary: true }]);
  });

  it('reads and lists administrators but refuses to PUT, PATCH or DELETE one (403), changing nothing', async () => {
    const admin = await makeUser(app.dataSource, {
      username: 'admin',
      email: 'admin@localhost',
      admin: true,
    });
    const id = String(admin.id);
    const read = await scim({ method: 'GET', path: `/Users/${id}` });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id, userName: 'admin', active: true });
    const listed = await scim({ method: 'GET', path: '/Users?filter=userName%20eq%20%22admin%22' });
    expect(listed.body.Resources.map((r: { id: string }) => r.id)).toEqual([id]);
    const rowOf = async () =>
      app.dataSource.query('SELECT username, email, external_id, active, admin FROM users WHERE id = $1', [
        id,
      ]);
    const before = await rowOf();
    const forbidden = scimError(403, 'Administrators are managed in the service, not through SCIM');
    // The takeovers: the bootstrap admin renamed to an attacker's IdP username, an admin re-keyed to their oid.
    for (const call of [
      { method: 'PATCH', body: patchBody({ op: 'replace', path: 'userName', value: 'attacker@uni.edu' }) },
      { method: 'PATCH', body: patchBody({ op: 'replace', path: 'externalId', value: 'attacker-oid' }) },
      { method: 'PATCH', body: patchBody({ op: 'replace', value: { active: false } }) },
      { method: 'PATCH', body: patchBody({ op: 'replace', path: 'displayName', value: 'Admin' }) },
      { method: 'PUT', body: { userName: 'admin', emails: [{ value: 'admin@uni.edu' }], active: false } },
      { method: 'DELETE' },
    ] as const) {
      const res = await scim({ ...call, path: `/Users/${id}` });
      expect({ method: call.method, status: res.status, body: res.body }).toEqual({
        method: call.method,
        status: 403,
        body: forbidden,
      });
    }
    expect(await rowOf()).toEqual(before);
    expect(await app.dataSource.query('SELECT action FROM audit_events')).toEqual([]);
    expect(await app.dataSource.query('SELECT type FROM change_events')).toEqual([]);
    // Validation (400) and existence (404) come first, as everywhere.
    const bad = await patchUser(id, { op: 'replace', path: 'active', value: 'maybe' });
    expect(bad.body).toEqual(scimError(400, 'active must be a boolean', 'invalidValue'));
    const badPut = await scim({ method: 'PUT', path: `/Users/${id}`, body: { userName: 'admin' } });
    expect(badPut.status).toBe(400);
  });
}
