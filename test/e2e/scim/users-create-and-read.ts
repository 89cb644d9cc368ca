// Part of test/scim.e2e-spec.ts: creating, reading, listing and filtering Users.
import { emptyListResponse, LIST_SCHEMA, scimError, USER_SCHEMA } from '../../support/scim.js';
import { jane, type ScimContext } from './context.js';

export function userCreateAndReadTests(ctx: ScimContext): void {
  const { app, scim, createJane, patchUser } = ctx;

  it('creates a user with no password and no admin rights, answers 201 with an absolute Location', async () => {
    const res = await scim({ method: 'POST', path: '/Users', body: jane });
    expect(res.status).toBe(201);
    const id = res.body.id;
    expect(id).toMatch(/^\d+$/);
    const location = `https://modules.uni.edu/api/scim/v2/Users/${id}`;
    expect(res.headers.get('location')).toBe(location);
    expect(res.body).toEqual({
      schemas: [USER_SCHEMA],
      id,
      externalId: 'a1b2c3',
      userName: 'jane.doe@uni.edu',
      name: { givenName: 'Jane', familyName: 'Doe', formatted: 'Jane Doe' },
      displayName: 'Jane Doe',
      emails: [{ value: 'jane.doe@uni.edu', type: 'work', primary: true }],
      active: true,
      meta: {
        resourceType: 'User',
        created: expect.stringMatching(/Z$/),
        lastModified: expect.stringMatching(/Z$/),
        location,
      },
    });
    const [row] = await app.dataSource.query('SELECT password_hash, admin, email FROM users WHERE id = $1', [
      id,
    ]);
    expect(row).toEqual({ password_hash: null, admin: false, email: 'jane.doe@uni.edu' });
    expect((await scim({ method: 'GET', path: `/Users/${id}` })).body).toEqual(res.body);
  });

  it('audits SCIM writes with a null actor, via scim and the token id, and writes the change events', async () => {
    const { id } = await createJane();
    await patchUser(id, { op: 'replace', path: 'displayName', value: 'Dr Jane Doe' });
    expect((await scim({ method: 'DELETE', path: `/Users/${id}` })).status).toBe(204);
    const [{ id: tokenId }] = await app.dataSource.query('SELECT id FROM integration_tokens');
    const audit = await app.dataSource.query(
      'SELECT actor_id, action, target_ids, summary FROM audit_events ORDER BY id',
    );
    expect(audit).toEqual([
      {
        actor_id: null,
        action: 'user.create',
        target_ids: [id],
        summary: { username: 'jane.doe@uni.edu', via: 'scim', token_id: Number(tokenId) },
      },
      {
        actor_id: null,
        action: 'user.update',
        target_ids: [id],
        summary: {
          display_name: { from: 'Jane Doe', to: 'Dr Jane Doe' },
          via: 'scim',
          token_id: Number(tokenId),
        },
      },
      {
        actor_id: null,
        action: 'user.delete',
        target_ids: [id],
        summary: { username: 'jane.doe@uni.edu', via: 'scim', token_id: Number(tokenId) },
      },
    ]);
    const events = await app.dataSource.query('SELECT type, data FROM change_events ORDER BY id');
    expect(events.map((e: { type: string }) => e.type)).toEqual([
      'user.created',
      'user.updated',
      'user.deleted',
    ]);
    expect(events[1].data).toMatchObject({
      id: Number(id),
      display_name: 'Dr Jane Doe',
      external_id: 'a1b2c3',
    });
    expect(events[2].data).toEqual({ id: Number(id), username: 'jane.doe@uni.edu' });
  });

  it.each([
    [{ ...jane, userName: undefined }, 'userName is required'],
    [
      { ...jane, userName: 'a b' },
      "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'",
    ],
    [{ ...jane, emails: [] }, 'A user needs an email address (emails[].value)'],
    [{ ...jane, emails: undefined }, 'A user needs an email address (emails[].value)'],
    [
      { ...jane, emails: [{ value: 'not-an-address', primary: true }] },
      'Email must be a valid email address',
    ],
    [{ ...jane, active: 'perhaps' }, 'active must be a boolean'],
    [{ ...jane, externalId: '' }, 'externalId must be a string of 1-255 characters'],
    [{ ...jane, displayName: 'x'.repeat(201) }, 'displayName must be a string of at most 200 characters'],
  ])('refuses a body breaking a rule with 400 invalidValue (%#)', async (body, detail) => {
    const res = await scim({ method: 'POST', path: '/Users', body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(scimError(400, detail, 'invalidValue'));
    expect(await app.dataSource.query('SELECT id FROM users')).toEqual([]);
  });

  it('answers 409 uniqueness for a taken userName, email or externalId, in that order', async () => {
    await createJane();
    const clash = async (body: unknown) => (await scim({ method: 'POST', path: '/Users', body })).body;
    expect(
      await clash({
        ...jane,
        userName: 'JANE.DOE@UNI.EDU',
        emails: [{ value: 'o@x.org' }],
        externalId: 'z',
      }),
    ).toEqual(scimError(409, 'A user with this username already exists', 'uniqueness'));
    expect(await clash({ ...jane, userName: 'other', externalId: 'z' })).toEqual(
      scimError(409, 'A user with this email already exists', 'uniqueness'),
    );
    expect(await clash({ ...jane, userName: 'other', emails: [{ value: 'o@x.org' }] })).toEqual(
      scimError(409, 'A user with this external ID already exists', 'uniqueness'),
    );
    // externalId is case-sensitive: another case is another person.
    const res = await scim({
      method: 'POST',
      path: '/Users',
      body: { ...jane, userName: 'other', emails: [{ value: 'o@x.org' }], externalId: 'A1B2C3' },
    });
    expect(res.status).toBe(201);
  });

  it('answers 404 for an unknown id and for ids that are no user id (GUIDs), not 400', async () => {
    for (const id of ['999999', '1d6b2e9a-5b4a-4f3e-9c41-6a0f6a5c7e21', '0', '99999999999999999999', 'abc']) {
      const res = await scim({ method: 'GET', path: `/Users/${id}` });
      expect({ id, status: res.status, body: res.body }).toEqual({
        id,
        status: 404,
        body: scimError(404, 'User not found'),
      });
    }
    expect(
      (await scim({ method: 'DELETE', path: '/Users/1d6b2e9a-5b4a-4f3e-9c41-6a0f6a5c7e21' })).status,
    ).toBe(404);
  });

  it('lists by id with startIndex and count, inactive users included, numbers as numbers', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await scim({
        method: 'POST',
        path: '/Users',
        body: { userName: `user${i}`, emails: [{ value: `user${i}@uni.edu` }], active: i !== 2 },
      });
      ids.push(res.body.id);
    }
    const page = await scim({ method: 'GET', path: '/Users?startIndex=2&count=2' });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({
      schemas: [LIST_SCHEMA],
      totalResults: 5,
      startIndex: 2,
      itemsPerPage: 2,
    });
    expect(page.body.Resources.map((r: { id: string }) => r.id)).toEqual([ids[1], ids[2]]);
    expect(page.body.Resources[1].active).toBe(false);
    const none = await scim({ method: 'GET', path: '/Users?count=0' });
    expect(none.body).toEqual(emptyListResponse(5));
    const clamped = await scim({ method: 'GET', path: '/Users?startIndex=-3&count=5000' });
    expect(clamped.body).toMatchObject({ startIndex: 1, itemsPerPage: 5 });
    const bad = await scim({ method: 'GET', path: '/Users?startIndex=abc' });
    expect(bad.body).toEqual(scimError(400, 'startIndex must be an integer', 'invalidValue'));
    expect((await scim({ method: 'GET', path: '/Users?count=1.5' })).body).toEqual(
      scimError(400, 'count must be an integer', 'invalidValue'),
    );
  });

  it('filters with eq on userName, externalId, id and emails, joined by and, with the case rules', async () => {
    const { id } = await createJane();
    const other = await scim({
      method: 'POST',
      path: '/Users',
      body: { userName: 'john', externalId: 'j-1', emails: [{ value: 'john@uni.edu' }] },
    });
    const matches = async (filter: string) => {
      const res = await scim({ method: 'GET', path: `/Users?filter=${encodeURIComponent(filter)}` });
      expect(res.status).toBe(200);
      return res.body.Resources.map((r: { id: string }) => r.id);
    };
    expect(await matches('userName eq "JANE.DOE@uni.edu"')).toEqual([id]);
    expect(await matches('USERNAME EQ "jane.doe@uni.edu"')).toEqual([id]);
    expect(await matches('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "john"')).toEqual([
      other.body.id,
    ]);
    expect(await matches('externalId eq "a1b2c3"')).toEqual([id]);
    expect(await matches('externalId eq "A1B2C3"')).toEqual([]);
    expect(await matches(`id eq "${id}"`)).toEqual([id]);
    expect(await matches('id eq "8a1c7e52-4b57-4a41-a1bc-4b0b5f6c1d93"')).toEqual([]);
    expect(await matches('emails.value eq "JANE.DOE@UNI.EDU"')).toEqual([id]);
    expect(await matches('emails[type eq "work"].value eq "john@uni.edu"')).toEqual([other.body.id]);
    expect(await matches('userName eq "john" and externalId eq "j-1"')).toEqual([other.body.id]);
    expect(await matches('userName eq "john"  AND  externalId eq "a1b2c3"')).toEqual([]);
    for (const filter of [
      'userName ne "john"',
      'userName eq "john" or userName eq "jane"',
      '(userName eq "john")',
      'displayName eq "Jane Doe"',
      'active eq true',
      'userName eq john',
      'userName eq "john',
      'userName sw "j"',
      'emails[type eq "home"].value eq "x@y.z"',
      'userName eq "john" and',
      '',
      'userName eq "jo\u0000hn"',
      'userName eq "jo\\u0000hn"',
      'externalId eq "a1b2c3\u007f"',
    ]) {
      const res = await scim({ method: 'GET', path: `/Users?filter=${encodeURIComponent(filter)}` });
      expect({ filter, status: res.status, scimType: res.body.scimType }).toEqual({
        filter,
        status: 400,
        scimType: 'invalidFilter',
      });
    }
  });
}
