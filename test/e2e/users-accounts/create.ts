// Part of test/users-accounts.e2e-spec.ts: creating users, one or in bulk.
import { USER_ACCOUNT_FIELDS } from '../../../src/users/user.shape.js';
import { type UsedTestApp } from '../../support/app.js';
import { makeUser, tokenFor } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { failure } from '../../support/http.js';

const PASSWORD_MESSAGE = 'Password must be 8-128 characters';
const USERNAME_MESSAGE = "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'";
const EMAIL_MESSAGE = 'Email must be a valid email address';

export function createTests({ app, api }: UsedTestApp): void {
  let token: string;

  beforeEach(async () => {
    ({ token } = await freshAdmin(app, { username: 'root', email: 'root@example.edu' }));
  });

  const userCount = async () => Number((await app.dataSource.query(`SELECT count(*) AS n FROM users`))[0].n);
  const login = (username: string, password: string) =>
    api.post('/api/auth/login', { body: { username, password } });

  describe('POST /api/users', () => {
    const create = (body: unknown) => api.post('/api/users', { token, body });
    const valid = { username: 'jsmith', email: 'J.Smith@Example.EDU', password: 'long-enough-1' };

    it('creates a user and answers 201 with its User summary, email lower-cased', async () => {
      const res = await create(valid);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        message: 'User created successfully',
        data: {
          id: expect.any(Number),
          username: 'jsmith',
          email: 'j.smith@example.edu',
          given_name: null,
          family_name: null,
          display_name: null,
          active: true,
          admin: false,
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          updated_at: res.body.data.created_at,
          avatar_url: null,
          external_id: null,
        },
      });
      const [row] = await app.dataSource.query(`SELECT * FROM users WHERE id = $1`, [res.body.data.id]);
      expect(row.email).toBe('j.smith@example.edu');
      expect(row.password_hash).toMatch(/^\$argon2id\$/);
      expect((await login('JSMITH', 'long-enough-1')).status).toBe(200);
    });

    it('creates an administrator when admin is true', async () => {
      const res = await create({ ...valid, admin: true });
      expect(res.body.data.admin).toBe(true);
      const me = await api.get('/api/users', {
        token: (await login('jsmith', valid.password)).body.data.token,
      });
      expect(me.status).toBe(200);
    });

    it.each([
      ['username of 3 characters', { username: 'abc' }],
      ['username of 64 characters', { username: 'a'.repeat(64) }],
      ['username of dots, dashes and underscores', { username: 'a.b_c-D9' }],
      ['password of 8 characters', { password: '12345678' }],
      ['password of 128 characters', { password: 'p'.repeat(128) }],
      ['password of 128 astral code points', { password: '😀'.repeat(128) }],
      ['password of 8 astral code points', { password: '😀'.repeat(8) }],
    ])('accepts a %s', async (_case, override) => {
      expect((await create({ ...valid, ...override })).status).toBe(201);
    });

    it.each([
      ['username of 2 characters', { username: 'ab' }, USERNAME_MESSAGE],
      ['username of 129 characters', { username: 'a'.repeat(129) }, USERNAME_MESSAGE],
      ['username with a space', { username: 'j smith' }, USERNAME_MESSAGE],
      ['username with a non-ASCII letter', { username: 'émile' }, USERNAME_MESSAGE],
      ['username with a comma', { username: 'j,smith' }, USERNAME_MESSAGE],
      ['numeric username', { username: 12345 }, USERNAME_MESSAGE],
      ['null username', { username: null }, USERNAME_MESSAGE],
      ['email without a domain', { email: 'jsmith@' }, EMAIL_MESSAGE],
      ['email that is not an address', { email: 'not an email' }, EMAIL_MESSAGE],
      ['email that is a number', { email: 42 }, EMAIL_MESSAGE],
      ['password of 7 characters', { password: '1234567' }, PASSWORD_MESSAGE],
      ['password of 129 characters', { password: 'p'.repeat(129) }, PASSWORD_MESSAGE],
      ['password of 7 astral code points', { password: '😀'.repeat(7) }, PASSWORD_MESSAGE],
      ['password of 129 astral code points', { password: '😀'.repeat(129) }, PASSWORD_MESSAGE],
      ['numeric password', { password: 12345678 }, PASSWORD_MESSAGE],
      ['admin as a string', { admin: 'true' }, 'admin must be a boolean'],
      ['admin as null', { admin: null }, 'admin must be a boolean'],
      ['admin as a number', { admin: 1 }, 'admin must be a boolean'],
    ])('answers 400 for a %s and creates nothing', async (_case, override, message) => {
      const res = await create({ ...valid, ...override });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message });
      expect(await userCount()).toBe(1);
    });

    it('reports every missing field in field order, unknown properties last', async () => {
      const res = await create({ role: 'x' });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(
        `${USERNAME_MESSAGE}; ${EMAIL_MESSAGE}; ${PASSWORD_MESSAGE}; property role should not exist`,
      );
    });

    it('rejects unknown properties', async () => {
      const res = await create({ ...valid, is_admin: true });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('property is_admin should not exist');
    });

    it('answers 400 for a body that is not an object, malformed or empty JSON', async () => {
      expect((await create([valid])).body.message).toBe('Request body must be a JSON object');
      const malformed = await create('{"username": ');
      expect(malformed.status).toBe(400);
      expect(malformed.body.message).toBe('Malformed JSON body');
      const empty = await api.post('/api/users', {
        token,
        headers: { 'content-type': 'application/json' },
        body: '',
      });
      expect(empty.body).toEqual(failure('Malformed JSON body'));
    });

    it('answers 415 for a body that is not JSON', async () => {
      const res = await api.post('/api/users', {
        token,
        body: 'username=jsmith',
        headers: { 'content-type': 'text/plain' },
      });
      expect(res.status).toBe(415);
      expect(res.body.message).toBe('Unsupported content type');
    });

    it('answers 409 for a username taken in another case, creating nothing', async () => {
      await makeUser(app.dataSource, { username: 'JSmith', email: 'other@example.edu' });
      const res = await create(valid);
      expect(res.status).toBe(409);
      expect(res.body).toEqual(failure('A user with this username already exists'));
      expect(await userCount()).toBe(2);
    });

    it('answers 409 for an email taken in another case, creating nothing', async () => {
      await makeUser(app.dataSource, { username: 'other', email: 'j.smith@example.edu' });
      const res = await create(valid);
      expect(res.status).toBe(409);
      expect(res.body.message).toBe('A user with this email already exists');
      expect(await userCount()).toBe(2);
    });

    it('answers 401 without a token and 403 for a non-admin, creating nothing', async () => {
      expect((await api.post('/api/users', { body: valid })).status).toBe(401);
      const member = await makeUser(app.dataSource);
      const res = await api.post('/api/users', { token: tokenFor(member), body: valid });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe('You do not have permission to perform this action');
      expect(await userCount()).toBe(2);
    });
  });

  describe('POST /api/users/bulk', () => {
    const bulk = (body: unknown) => api.post('/api/users/bulk', { token, body });
    const entry = (name: string, extra: Record<string, unknown> = {}) => ({
      username: name,
      email: `${name}@Example.edu`,
      password: `password-of-${name}`,
      ...extra,
    });

    it('creates every user and answers 201 with their summaries in input order', async () => {
      const res = await bulk({ users: [entry('zoe'), entry('adam', { admin: true }), entry('mia')] });
      expect(res.status).toBe(201);
      expect(res.body.message).toBe('Users created successfully');
      expect(res.body.success).toBe(true);
      expect(res.body.data.map((user: any) => [user.username, user.email, user.admin])).toEqual([
        ['zoe', 'zoe@example.edu', false],
        ['adam', 'adam@example.edu', true],
        ['mia', 'mia@example.edu', false],
      ]);
      for (const user of res.body.data) {
        expect(Object.keys(user)).toEqual(USER_ACCOUNT_FIELDS);
        expect(user.avatar_url).toBeNull();
      }
      const hashes = await app.dataSource.query(`SELECT password_hash FROM users WHERE username <> 'root'`);
      expect(hashes.every((row: any) => row.password_hash.startsWith('$argon2id$'))).toBe(true);
      expect((await login('adam', 'password-of-adam')).status).toBe(200);
    });

    it.each([
      ['an empty list', { users: [] }, 'At least one user is required'],
      ['no list', {}, 'At least one user is required'],
      ['a list that is not an array', { users: entry('x') }, 'users must be an array of users'],
      [
        '501 users',
        { users: Array.from({ length: 501 }, (_, i) => entry(`u${i}`)) },
        'At most 500 users are allowed per request',
      ],
    ])('answers 400 for %s', async (_case, body, message) => {
      const res = await bulk(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message });
      expect(await userCount()).toBe(1);
    });

    it('names each invalid entry by its index and creates nothing', async () => {
      const res = await bulk({
        users: [entry('ann', { password: 'short' }), entry('ben'), entry('cat', { email: 'nope' })],
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failure(`users[0]: ${PASSWORD_MESSAGE}; users[2]: ${EMAIL_MESSAGE}`));
      expect(await userCount()).toBe(1);
    });

    it('prefixes every message of an entry, in field order, and reports entries that are not objects', async () => {
      const res = await bulk({ users: [{ admin: 'no', extra: 1 }, null, 'dan'] });
      expect(res.body.message).toBe(
        [
          `users[0]: ${USERNAME_MESSAGE}`,
          `users[0]: ${EMAIL_MESSAGE}`,
          `users[0]: ${PASSWORD_MESSAGE}`,
          'users[0]: admin must be a boolean',
          'users[0]: property extra should not exist',
          'users[1]: User must be a JSON object',
          'users[2]: User must be a JSON object',
        ].join('; '),
      );
    });

    it('reports unknown top-level properties after the entries', async () => {
      const res = await bulk({ users: [], dry_run: true });
      expect(res.body.message).toBe('At least one user is required; property dry_run should not exist');
    });

    it('answers 409 listing every value that clashes with a stored user, as sent, creating nothing', async () => {
      await makeUser(app.dataSource, { username: 'alice', email: 'alice@example.edu' });
      await makeUser(app.dataSource, { username: 'bob', email: 'bob@example.edu' });
      const res = await bulk({
        users: [
          entry('carl'),
          entry('ALICE', { email: 'new@example.edu' }),
          entry('dora', { email: 'Bob@Example.EDU' }),
        ],
      });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(
        failure('A user with this username or email already exists: ALICE, Bob@Example.EDU'),
      );
      expect(await userCount()).toBe(3);
    });

    it('lists clashes inside the batch once each, case-insensitively, in request order', async () => {
      const res = await bulk({
        users: [
          entry('erin', { email: 'shared@example.edu' }),
          entry('dave'),
          entry('Dave', { email: 'SHARED@example.edu' }),
          entry('DAVE'),
          entry('root'),
        ],
      });
      expect(res.status).toBe(409);
      expect(res.body.message).toBe(
        'A user with this username or email already exists: shared@example.edu, dave, dave@Example.edu, root, root@Example.edu',
      );
      expect(await userCount()).toBe(1);
    });

    it('validates every entry before looking for clashes', async () => {
      const res = await bulk({ users: [entry('root'), entry('x', { password: 'short' })] });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(`users[1]: ${USERNAME_MESSAGE}; users[1]: ${PASSWORD_MESSAGE}`);
    });

    it('answers 401 without a token and 403 for a non-admin, creating nothing', async () => {
      expect((await api.post('/api/users/bulk', { body: { users: [entry('a1b')] } })).status).toBe(401);
      const member = await makeUser(app.dataSource);
      const res = await api.post('/api/users/bulk', {
        token: tokenFor(member),
        body: { users: [entry('a1b')] },
      });
      expect(res.status).toBe(403);
      expect(await userCount()).toBe(2);
    });
  });
}
