// Part of test/users-accounts.e2e-spec.ts: reading, updating and deleting a user, and a user's modules.
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { type UsedTestApp } from '../../support/app.js';
import { assignRole, makeModule, makeUser, tokenFor, type UserRow } from '../../support/factories.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import { failure } from '../../support/http.js';
import { accountJson, nextSecond } from '../../support/users-helpers.js';

const PERMISSION_DENIED = 'You do not have permission to perform this action';

export function manageTests({ app, api }: UsedTestApp): void {
  let admin: UserRow;
  let token: string;
  let user: UserRow;

  beforeEach(async () => {
    ({ admin, token } = await freshAdmin(app, { username: 'root', email: 'root@example.edu' }));
    user = await makeUser(app.dataSource, { username: 'jsmith', email: 'jsmith@example.edu' });
  });

  const stored = async (id: number) =>
    (await app.dataSource.query(`SELECT * FROM users WHERE id = $1`, [id]))[0];
  const login = (username: string, password: string) =>
    api.post('/api/auth/login', { body: { username, password } });

  describe('access', () => {
    const adminRoutes: { method: string; path: string; body?: unknown }[] = [
      { method: 'GET', path: '/api/users' },
      { method: 'POST', path: '/api/users', body: {} },
      { method: 'POST', path: '/api/users/bulk', body: { users: [] } },
      { method: 'GET', path: '/api/users/1' },
      { method: 'PUT', path: '/api/users/1', body: {} },
      { method: 'DELETE', path: '/api/users/1' },
      { method: 'GET', path: '/api/users/1/modules' },
    ];

    it.each(adminRoutes)(
      '$method $path needs a token (401) and an admin (403)',
      async ({ method, path, body }) => {
        const anonymous = await api.request(method, path, { body });
        expect(anonymous.status).toBe(401);
        expect(anonymous.body).toEqual(failure('Authentication required'));
        const member = await api.request(method, path, { body, token: tokenFor(user) });
        expect(member.status).toBe(403);
        expect(member.body).toEqual(failure(PERMISSION_DENIED));
      },
    );

    it('refuses a token claiming admin for a user who is not one', async () => {
      const res = await api.get(`/api/users/${user.id}`, { token: tokenFor({ id: user.id, admin: true }) });
      expect(res.status).toBe(403);
    });

    it('checks the admin right before the path id', async () => {
      const res = await api.get('/api/users/abc', { token: tokenFor(user) });
      expect(res.status).toBe(403);
    });
  });

  describe('GET /api/users/{user_id}', () => {
    it('answers 200 with the User summary', async () => {
      const res = await api.get(`/api/users/${user.id}`, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'User retrieved successfully',
        data: accountJson(user),
      });
    });

    it('answers 404 for an unknown user, including the largest 64-bit id', async () => {
      for (const id of ['999999999', '9223372036854775807']) {
        const res = await api.get(`/api/users/${id}`, { token });
        expect(res.status).toBe(404);
        expect(res.body).toEqual(failure('User not found'));
      }
    });

    it.each(['abc', '0', '-1', '1.5', '9223372036854775808', '1e3', '%2B1'])(
      'answers 400 for the id %s',
      async (id) => {
        const res = await api.get(`/api/users/${id}`, { token });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(failure('user_id must be a positive integer'));
      },
    );
  });

  describe('PUT /api/users/{user_id}', () => {
    const update = (id: number | string, body: unknown, as = token) =>
      api.put(`/api/users/${id}`, { token: as, body });

    it('changes the username and bumps updated_at only', async () => {
      const res = await update(user.id, { username: 'John.Smith' });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('User updated successfully');
      expect(res.body.data).toMatchObject({
        id: Number(user.id),
        username: 'John.Smith',
        email: 'jsmith@example.edu',
        admin: false,
        created_at: user.created_at.toISOString(),
      });
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(user.updated_at.getTime());
      expect((await stored(user.id)).username).toBe('John.Smith');
    });

    it('stores a new email lower-cased', async () => {
      const res = await update(user.id, { email: 'New.Address@Example.EDU' });
      expect(res.body.data.email).toBe('new.address@example.edu');
      expect((await stored(user.id)).email).toBe('new.address@example.edu');
    });

    it('bumps updated_at even when the values are unchanged', async () => {
      const res = await update(user.id, { username: 'jsmith' });
      expect(res.status).toBe(200);
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(user.updated_at.getTime());
    });

    it('lets a user keep their username in another case', async () => {
      const res = await update(user.id, { username: 'JSMITH', email: 'JSMITH@example.edu' });
      expect(res.status).toBe(200);
      expect(res.body.data.username).toBe('JSMITH');
    });

    it('grants admin rights, which apply to the user at once', async () => {
      const memberToken = tokenFor({ id: user.id, admin: true });
      expect((await api.get('/api/users', { token: memberToken })).status).toBe(403);
      const res = await update(user.id, { admin: true });
      expect(res.body.data.admin).toBe(true);
      expect((await api.get('/api/users', { token: memberToken })).status).toBe(200);
    });

    it("removes another admin's rights, which applies to their token at once", async () => {
      const other = await makeUser(app.dataSource, { admin: true });
      const otherToken = tokenFor(other);
      expect((await api.get('/api/users', { token: otherToken })).status).toBe(200);
      const res = await update(other.id, { admin: false });
      expect(res.status).toBe(200);
      expect(res.body.data.admin).toBe(false);
      expect((await api.get('/api/users', { token: otherToken })).status).toBe(403);
    });

    it('changes the password: the new one logs in, the old one does not', async () => {
      const before = await stored(user.id);
      const res = await update(user.id, { password: 'a-brand-new-secret' });
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toMatch(/password|argon2/);
      const after = await stored(user.id);
      expect(after.password_hash).toMatch(/^\$argon2id\$/);
      expect(after.password_changed_at.getTime()).toBeGreaterThan(before.password_changed_at.getTime());
      expect((await login('jsmith', user.password)).status).toBe(401);
      expect((await login('jsmith', 'a-brand-new-secret')).status).toBe(200);
    });

    it("refuses the user's tokens issued before an admin changed the password", async () => {
      const oldToken = tokenFor(user);
      // Served once, so the 5-second access cache holds this user when the password changes.
      expect((await api.get('/api/auth/me', { token: oldToken })).status).toBe(200);
      await nextSecond();
      expect((await update(user.id, { password: 'a-brand-new-secret' })).status).toBe(200);
      const refused = await api.get('/api/auth/me', { token: oldToken });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual(failure('Invalid or expired token'));
      const fresh = (await login('jsmith', 'a-brand-new-secret')).body.data.token;
      expect((await api.get('/api/auth/me', { token: fresh })).status).toBe(200);
    });

    it('leaves tokens valid when only other fields change', async () => {
      const oldToken = tokenFor(user);
      await nextSecond();
      expect((await update(user.id, { username: 'renamed', email: 'r@example.edu' })).status).toBe(200);
      expect((await api.get('/api/auth/me', { token: oldToken })).status).toBe(200);
    });

    it('answers 403 to an admin removing their own admin rights, changing nothing', async () => {
      const res = await update(admin.id, { admin: false, username: 'renamed' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(failure('You cannot remove your own admin rights'));
      const row = await stored(admin.id);
      expect([row.admin, row.username]).toEqual([true, 'root']);
    });

    it('lets an admin confirm their own admin flag and edit themselves', async () => {
      const res = await update(admin.id, { admin: true, username: 'root2' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ admin: true, username: 'root2' });
    });

    it('answers 400 when no field is given', async () => {
      const res = await update(user.id, {});
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failure('At least one field must be provided'));
    });

    it.each([
      [{ username: 'no' }, "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'"],
      [{ email: 'nope' }, 'Email must be a valid email address'],
      [{ password: 'short' }, 'Password must be 8-128 characters'],
      [{ admin: 'yes' }, 'admin must be a boolean'],
      [{ username: null }, "Username must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'"],
      [{ password: null }, 'Password must be 8-128 characters'],
      [{ nickname: 'x' }, 'property nickname should not exist'],
      [
        { admin: 0, email: 'x', avatar_url: null },
        'Email must be a valid email address; admin must be a boolean; property avatar_url should not exist',
      ],
    ])('answers 400 for %j and changes nothing', async (body, message) => {
      const res = await update(user.id, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, data: null, message });
      expect((await stored(user.id)).updated_at).toEqual(user.updated_at);
    });

    it('validates the body before looking the user up', async () => {
      expect((await update(999999999, { email: 'nope' })).status).toBe(400);
      expect((await update(999999999, {})).status).toBe(400);
      const res = await update(999999999, { username: 'valid-name' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(failure('User not found'));
    });

    it('answers 400 for an invalid id', async () => {
      const res = await update('x1', { username: 'valid-name' });
      expect(res.body.message).toBe('user_id must be a positive integer');
    });

    it('answers 409 for a username taken in another case, changing nothing', async () => {
      const res = await update(user.id, { username: 'ROOT', email: 'fresh@example.edu' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(failure('A user with this username already exists'));
      const row = await stored(user.id);
      expect([row.username, row.email]).toEqual(['jsmith', 'jsmith@example.edu']);
      expect(row.updated_at).toEqual(user.updated_at);
    });

    it('answers 409 for an email taken in another case, changing nothing', async () => {
      const res = await update(user.id, { email: 'Root@Example.edu', password: 'another-password' });
      expect(res.status).toBe(409);
      expect(res.body.message).toBe('A user with this email already exists');
      expect((await login('jsmith', user.password)).status).toBe(200);
    });
  });

  describe('DELETE /api/users/{user_id}', () => {
    it('deletes the user and their role assignments, answering data null', async () => {
      const module = await makeModule(app.dataSource);
      await assignRole(app.dataSource, user.id, module.id, ModuleRole.Student);
      const keep = await makeUser(app.dataSource);
      await assignRole(app.dataSource, keep.id, module.id, ModuleRole.Tutor);
      const userToken = tokenFor(user);

      const res = await api.delete(`/api/users/${user.id}`, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, data: null, message: 'User deleted successfully' });
      expect(await stored(user.id)).toBeUndefined();
      const roles = await app.dataSource.query(`SELECT user_id FROM user_module_roles`);
      expect(roles.map((row: any) => Number(row.user_id))).toEqual([Number(keep.id)]);
      expect((await api.get(`/api/users/${user.id}`, { token })).status).toBe(404);
      const gone = await api.get('/api/auth/me', { token: userToken });
      expect(gone.status).toBe(401);
      expect(gone.body.message).toBe('Invalid or expired token');
    });

    it('answers 403 to an admin deleting their own account, deleting nothing', async () => {
      const res = await api.delete(`/api/users/${admin.id}`, { token });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(failure('You cannot delete your own account'));
      expect(await stored(admin.id)).toBeDefined();
    });

    it('answers 404 for an unknown user and 400 for an invalid id', async () => {
      const missing = await api.delete('/api/users/999999999', { token });
      expect(missing.status).toBe(404);
      expect(missing.body.message).toBe('User not found');
      const invalid = await api.delete('/api/users/0', { token });
      expect(invalid.status).toBe(400);
      expect(invalid.body.message).toBe('user_id must be a positive integer');
    });
  });

  describe('GET /api/users/{user_id}/modules', () => {
    it('lists the modules with the role held, by year descending then code', async () => {
      const a = await makeModule(app.dataSource, { code: 'BBB100', year: 2025, description: null });
      const b = await makeModule(app.dataSource, { code: 'AAA100', year: 2025 });
      const c = await makeModule(app.dataSource, { code: 'ZZZ100', year: 2026, credits: 30 });
      const other = await makeModule(app.dataSource, { code: 'CCC100', year: 2026 });
      await assignRole(app.dataSource, user.id, a.id, ModuleRole.Student);
      await assignRole(app.dataSource, user.id, b.id, ModuleRole.AssistantLecturer);
      await assignRole(app.dataSource, user.id, c.id, ModuleRole.Lecturer);
      await assignRole(app.dataSource, admin.id, other.id, ModuleRole.Tutor);

      const res = await api.get(`/api/users/${user.id}/modules`, { token });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Modules for user retrieved successfully');
      const wire = (module: typeof a, role: string) => ({
        id: Number(module.id),
        code: module.code,
        year: module.year,
        description: module.description,
        credits: module.credits,
        created_at: module.created_at.toISOString(),
        updated_at: module.updated_at.toISOString(),
        role,
      });
      expect(res.body.data).toEqual([wire(c, 'Lecturer'), wire(b, 'AssistantLecturer'), wire(a, 'Student')]);
    });

    it('answers an empty list for a user without roles', async () => {
      const res = await api.get(`/api/users/${user.id}/modules`, { token });
      expect(res.body).toEqual({
        success: true,
        data: [],
        message: 'Modules for user retrieved successfully',
      });
    });

    it('answers 404 for an unknown user and 400 for an invalid id', async () => {
      const missing = await api.get('/api/users/999999999/modules', { token });
      expect(missing.status).toBe(404);
      expect(missing.body.message).toBe('User not found');
      expect((await api.get('/api/users/abc/modules', { token })).status).toBe(400);
    });
  });
}
