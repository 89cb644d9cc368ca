// Part of test/users-accounts.e2e-spec.ts: creating, reading and updating a user's people fields.
import { USER_ACCOUNT_FIELDS } from '../../../src/users/user.shape.js';
import { auditEvents } from '../../support/csv.js';
import { failure } from '../../support/http.js';
import { PASSWORD, type PeopleFieldsContext } from './context.js';

export function peopleFieldTests(ctx: PeopleFieldsContext): void {
  const { app, api, create, jane, given } = ctx;

  describe('create, read, update', () => {
    it('creates a user with names, external_id and active, answering them in the contract order', async () => {
      const res = await create(jane);
      expect(res.status).toBe(201);
      expect(Object.keys(res.body.data)).toEqual(USER_ACCOUNT_FIELDS);
      expect(res.body.data).toMatchObject({
        username: 'jane.doe@uni.edu',
        given_name: 'Jane',
        family_name: 'Doe',
        display_name: 'Jane Doe',
        active: true,
        external_id: jane.external_id,
      });
      const read = await api.get(`/api/users/${res.body.data.id}`, { token: given.token });
      expect(read.body.data).toEqual(res.body.data);
    });

    it('gives a user created without them nulls and active true', async () => {
      const res = await create({ username: 'plain', email: 'plain@example.edu', password: PASSWORD });
      expect(res.body.data).toMatchObject({
        given_name: null,
        family_name: null,
        display_name: null,
        active: true,
        external_id: null,
      });
      const inactive = await create({
        username: 'gone',
        email: 'gone@example.edu',
        password: PASSWORD,
        active: false,
        given_name: null,
      });
      expect(inactive.status).toBe(201);
      expect(inactive.body.data).toMatchObject({ active: false, given_name: null });
    });

    it.each([
      ['a username with @ and +', { username: 'a+b@uni.edu' }, 201, undefined],
      ['a 128-character username', { username: 'u'.repeat(128) }, 201, undefined],
      [
        'a 129-character username',
        { username: 'u'.repeat(129) },
        400,
        "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'",
      ],
      [
        'a username with a space',
        { username: 'jane doe' },
        400,
        "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'",
      ],
      [
        'a 101-character given_name',
        { given_name: 'g'.repeat(101) },
        400,
        'given_name must be at most 100 characters',
      ],
      ['a numeric family_name', { family_name: 5 }, 400, 'family_name must be at most 100 characters'],
      [
        'a 201-character display_name',
        { display_name: 'd'.repeat(201) },
        400,
        'display_name must be at most 200 characters',
      ],
      ['an empty external_id', { external_id: '' }, 400, 'external_id must be 1-255 characters'],
      [
        'a 256-character external_id',
        { external_id: 'e'.repeat(256) },
        400,
        'external_id must be 1-255 characters',
      ],
      ['a string active', { active: 'false' }, 400, 'active must be a boolean'],
      ['a null active', { active: null }, 400, 'active must be a boolean'],
    ])('checks %s', async (_name, overrides, status, message) => {
      const res = await create({
        username: 'someone',
        email: 'someone@example.edu',
        password: PASSWORD,
        ...overrides,
      });
      expect(res.status).toBe(status);
      if (message !== undefined) expect(res.body).toEqual({ success: false, data: null, message });
    });

    it('counts characters as code points: 100 emoji make a valid given_name', async () => {
      const res = await create({ ...jane, external_id: null, given_name: '😀'.repeat(100) });
      expect(res.status).toBe(201);
      expect(res.body.data.given_name).toBe('😀'.repeat(100));
    });

    it('joins every failing rule in field order', async () => {
      const res = await create({
        username: 'x',
        email: 'y',
        password: PASSWORD,
        given_name: 'g'.repeat(101),
        active: 1,
      });
      expect(res.body.message).toBe(
        "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'; " +
          'Email must be a valid email address; given_name must be at most 100 characters; active must be a boolean',
      );
    });

    it('keeps external_id unique, case-sensitively: 409 on create and on PUT', async () => {
      const first = await create(jane);
      const clash = await create({ ...jane, username: 'other', email: 'other@example.edu' });
      expect(clash.status).toBe(409);
      expect(clash.body).toEqual(failure('A user with this external ID already exists'));
      const otherCase = await create({
        ...jane,
        username: 'other',
        email: 'other@example.edu',
        external_id: jane.external_id.toUpperCase(),
      });
      expect(otherCase.status).toBe(201);
      const put = await api.put(`/api/users/${otherCase.body.data.id}`, {
        token: given.token,
        body: { external_id: jane.external_id },
      });
      expect(put.status).toBe(409);
      expect(put.body.message).toBe('A user with this external ID already exists');
      // Several users without one are fine.
      for (const n of [1, 2])
        expect(
          (await create({ username: `n${n}x`, email: `n${n}@example.edu`, password: PASSWORD })).status,
        ).toBe(201);
      expect(first.status).toBe(201);
    });

    it('refuses an external_id clash in a bulk create, creating nothing', async () => {
      await create(jane);
      const res = await api.post('/api/users/bulk', {
        token: given.token,
        body: {
          users: [
            { username: 'bulk1', email: 'bulk1@example.edu', password: PASSWORD },
            {
              username: 'bulk2',
              email: 'bulk2@example.edu',
              password: PASSWORD,
              external_id: jane.external_id,
            },
          ],
        },
      });
      expect(res.status).toBe(409);
      expect(res.body.message).toBe('A user with this external ID already exists');
      const [{ count }] = await app.dataSource.query(
        `SELECT count(*)::int AS count FROM users WHERE username LIKE 'bulk%'`,
      );
      expect(count).toBe(0);
    });

    it('takes the fields in bulk create, validated per entry', async () => {
      const res = await api.post('/api/users/bulk', {
        token: given.token,
        body: {
          users: [
            { username: 'b1', email: 'b1@example.edu', password: PASSWORD, given_name: 'x'.repeat(101) },
            { username: 'bob', email: 'bob@example.edu', password: PASSWORD, active: 'yes' },
          ],
        },
      });
      expect(res.body.message).toBe(
        "users[0]: Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'; " +
          'users[0]: given_name must be at most 100 characters; users[1]: active must be a boolean',
      );
      const ok = await api.post('/api/users/bulk', {
        token: given.token,
        body: {
          users: [
            {
              username: 'ann',
              email: 'ann@example.edu',
              password: PASSWORD,
              display_name: 'Ann',
              active: false,
            },
            { username: 'bob', email: 'bob@example.edu', password: PASSWORD, external_id: 'B-1' },
          ],
        },
      });
      expect(ok.status).toBe(201);
      expect(ok.body.data.map((u: any) => [u.display_name, u.active, u.external_id])).toEqual([
        ['Ann', false, null],
        [null, true, 'B-1'],
      ]);
    });

    it('changes the fields with PUT (null clears), audits each change and writes a user.updated event', async () => {
      const created = (await create(jane)).body.data;
      const res = await api.put(`/api/users/${created.id}`, {
        token: given.token,
        body: { given_name: 'Janet', display_name: null, external_id: 'NEW-1' },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        given_name: 'Janet',
        family_name: 'Doe',
        display_name: null,
        external_id: 'NEW-1',
      });
      const [audit] = await auditEvents(app.dataSource, 'user.update');
      expect(audit.summary).toEqual({
        given_name: { from: 'Jane', to: 'Janet' },
        display_name: { from: 'Jane Doe', to: null },
        external_id: { from: jane.external_id, to: 'NEW-1' },
      });
      const [event] = await app.dataSource.query(
        `SELECT data FROM change_events WHERE type = 'user.updated' ORDER BY id DESC LIMIT 1`,
      );
      expect(event.data).toEqual(res.body.data);
    });

    it('counts a PUT with only the new fields as a change (not "At least one field must be provided")', async () => {
      const created = (await create(jane)).body.data;
      const res = await api.put(`/api/users/${created.id}`, {
        token: given.token,
        body: { family_name: 'Smith' },
      });
      expect(res.status).toBe(200);
      expect(res.body.data.family_name).toBe('Smith');
    });

    it('puts external_id in the user.created event', async () => {
      await create(jane);
      const [event] = await app.dataSource.query(
        `SELECT data FROM change_events WHERE type = 'user.created'`,
      );
      expect(event.data).toMatchObject({
        username: jane.username,
        external_id: jane.external_id,
        active: true,
      });
    });
  });
}
