// Part of test/events.e2e-spec.ts: change events written by every write route, in the change transaction.
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { postCsv } from '../../support/csv.js';
import { assignRole, makeModule, makeUser, tokenFor } from '../../support/factories.js';
import { image, uploadFile } from '../../support/users-helpers.js';
import { type ChangeFeedContext } from './context.js';

export function writeRouteTests(ctx: ChangeFeedContext): void {
  const { app, api, readAll, types, end, given } = ctx;

  describe('written by every write route, in the change transaction', () => {
    it('module create, update, delete and bulk delete (one module.deleted per module)', async () => {
      const start = await end();
      const created = await api.post('/api/modules', {
        token: given.token,
        body: { code: 'CSC101', year: 2026, credits: 15 },
      });
      const id = created.body.data.id as number;
      const updated = await api.put(`/api/modules/${id}`, {
        token: given.token,
        body: { code: 'CSC101', year: 2026, credits: 20 },
      });
      expect(updated.status).toBe(200);
      const others = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          makeModule(app.dataSource, { code: `BLK${100 + i}`, year: 2026 }),
        ),
      );
      const bulk = await api.delete('/api/modules/bulk', {
        token: given.token,
        body: { module_ids: [...others.map((m) => Number(m.id)), 999_999_999] },
      });
      expect(bulk.status).toBe(200);
      expect((await api.delete(`/api/modules/${id}`, { token: given.token })).status).toBe(200);
      const { events } = await readAll(start);
      expect(types(events)).toEqual([
        'module.created',
        'module.updated',
        ...others.map(() => 'module.deleted'),
        'module.deleted',
      ]);
      expect(events[1].data).toEqual(updated.body.data);
      expect(events.slice(2, 42).map((event) => event.data)).toEqual(
        // In id order: the order the delete locked them in.
        others.map((m) => ({ id: Number(m.id), code: m.code, year: 2026 })).sort((a, b) => a.id - b.id),
      );
      expect(events[42].data).toEqual({ id, code: 'CSC101', year: 2026 });
    });

    it('personnel and students: added, changed and removed members', async () => {
      const mod = await makeModule(app.dataSource);
      const [ann, bob, cid] = await Promise.all(
        ['ann', 'bob', 'cid'].map((username) => makeUser(app.dataSource, { username })),
      );
      await assignRole(app.dataSource, bob.id, mod.id, ModuleRole.Student);
      const start = await end();
      const path = `/api/modules/${mod.id}`;
      const assign = await api.post(`${path}/personnel`, {
        token: given.token,
        body: { user_ids: [Number(ann.id), Number(bob.id)], role: 'Tutor' },
      });
      expect(assign.status).toBe(200);
      // Assigning a role already held changes nothing: no event.
      await api.post(`${path}/personnel`, {
        token: given.token,
        body: { user_ids: [Number(ann.id)], role: 'Tutor' },
      });
      expect(
        (await api.post(`${path}/students`, { token: given.token, body: { user_ids: [Number(cid.id)] } }))
          .status,
      ).toBe(200);
      expect(
        (await api.delete(`${path}/students`, { token: given.token, body: { user_ids: [Number(cid.id)] } }))
          .status,
      ).toBe(200);
      expect(
        (
          await api.delete(`${path}/personnel`, {
            token: given.token,
            body: { user_ids: [Number(ann.id)], role: 'Tutor' },
          })
        ).status,
      ).toBe(200);
      const moduleId = Number(mod.id);
      expect((await readAll(start)).events.map((event) => event.data)).toEqual([
        {
          module_id: moduleId,
          added: [{ user_id: Number(ann.id), role: 'Tutor' }],
          removed: [],
          changed: [{ user_id: Number(bob.id), from: 'Student', to: 'Tutor' }],
        },
        {
          module_id: moduleId,
          added: [{ user_id: Number(cid.id), role: 'Student' }],
          removed: [],
          changed: [],
        },
        {
          module_id: moduleId,
          added: [],
          removed: [{ user_id: Number(cid.id), role: 'Student' }],
          changed: [],
        },
        {
          module_id: moduleId,
          added: [],
          removed: [{ user_id: Number(ann.id), role: 'Tutor' }],
          changed: [],
        },
      ]);
    });

    it('roster import: one module.members_changed with added, changed and removed; none for a dry run', async () => {
      const mod = await makeModule(app.dataSource);
      const [ann, bob, cid] = await Promise.all(
        ['ann', 'bob', 'cid'].map((username) => makeUser(app.dataSource, { username })),
      );
      await assignRole(app.dataSource, bob.id, mod.id, ModuleRole.Student);
      await assignRole(app.dataSource, cid.id, mod.id, ModuleRole.Student);
      const start = await end();
      const path = `/api/modules/${mod.id}/roster/import`;
      expect((await postCsv(api, `${path}?dry_run=true`, given.token, 'user,role\nann,Tutor\n')).status).toBe(
        200,
      );
      const res = await postCsv(
        api,
        `${path}?mode=sync&max_removals=5`,
        given.token,
        'user,role\nann,Tutor\nbob,Tutor\n',
      );
      expect(res.status).toBe(200);
      const { events } = await readAll(start);
      expect(events).toEqual([
        expect.objectContaining({
          type: 'module.members_changed',
          data: {
            module_id: Number(mod.id),
            added: [{ user_id: Number(ann.id), role: 'Tutor' }],
            removed: [{ user_id: Number(cid.id), role: 'Student' }],
            changed: [{ user_id: Number(bob.id), from: 'Student', to: 'Tutor' }],
          },
        }),
      ]);
    });

    it('users: create, bulk, import, update, avatar, password change and delete, never with a hash', async () => {
      const start = await end();
      const one = await api.post('/api/users', {
        token: given.token,
        body: { username: 'ann', email: 'ann@example.edu', password: 'correct-horse-battery' },
      });
      const bulk = await api.post('/api/users/bulk', {
        token: given.token,
        body: {
          users: [
            { username: 'bob', email: 'bob@example.edu', password: 'correct-horse-battery' },
            { username: 'cid', email: 'cid@example.edu', password: 'correct-horse-battery' },
          ],
        },
      });
      expect(bulk.status).toBe(201);
      const imported = await postCsv(
        api,
        '/api/users/import',
        given.token,
        'username,email\ndee,dee@example.edu\n',
      );
      expect(imported.status).toBe(201);
      const annId = one.body.data.id as number;
      const updated = await api.put(`/api/users/${annId}`, {
        token: given.token,
        body: { email: 'ann2@example.edu' },
      });
      expect(updated.status).toBe(200);
      const avatar = await uploadFile(app.url, annId, image('png'), given.token);
      expect(avatar.status).toBe(200);
      const annToken = tokenFor({ id: annId, admin: false });
      const password = await api.put('/api/auth/password', {
        token: annToken,
        body: { current_password: 'correct-horse-battery', new_password: 'another-horse-battery' },
      });
      expect(password.status).toBe(200);
      expect((await api.delete(`/api/users/${annId}`, { token: given.token })).status).toBe(200);
      const { events } = await readAll(start);
      expect(types(events)).toEqual([
        'user.created',
        'user.created',
        'user.created',
        'user.created',
        'user.updated',
        'user.updated',
        'user.updated',
        'user.deleted',
      ]);
      expect(events[0].data).toEqual(one.body.data);
      expect(events.slice(1, 3).map((event) => event.data)).toEqual(bulk.body.data);
      expect(events[3].data).toMatchObject({ username: 'dee', email: 'dee@example.edu', admin: false });
      expect(events[4].data).toEqual(updated.body.data);
      expect(events[5].data).toEqual(avatar.body.data);
      expect(events[5].data.avatar_url).toBe(`/api/users/${annId}/avatar`);
      expect(events[6].data).toEqual(password.body.data.user);
      expect(events[7].data).toEqual({ id: annId, username: 'ann' });
      for (const event of events) expect(Object.keys(event.data)).not.toContain('password_hash');
      expect(JSON.stringify(events)).not.toMatch(/argon2|password/);
    });

    it('writes nothing for a failed request', async () => {
      const mod = await makeModule(app.dataSource, { code: 'CSC101', year: 2026 });
      const ann = await makeUser(app.dataSource, { username: 'ann' });
      await assignRole(app.dataSource, ann.id, mod.id, ModuleRole.Tutor);
      const start = await end();
      // A clash (409), a bad body (400), an unknown user (404), a partial removal (409), a row error (422).
      expect(
        (
          await api.post('/api/modules', {
            token: given.token,
            body: { code: 'CSC101', year: 2026, credits: 5 },
          })
        ).status,
      ).toBe(409);
      expect(
        (
          await api.post('/api/modules', {
            token: given.token,
            body: { code: 'bad', year: 2026, credits: 5 },
          })
        ).status,
      ).toBe(400);
      expect(
        (
          await api.post(`/api/modules/${mod.id}/personnel`, {
            token: given.token,
            body: { user_ids: [Number(ann.id), 999_999], role: 'Tutor' },
          })
        ).status,
      ).toBe(404);
      expect(
        (
          await api.delete(`/api/modules/${mod.id}/personnel`, {
            token: given.token,
            body: { user_ids: [Number(ann.id), Number(given.admin.id)], role: 'Tutor' },
          })
        ).status,
      ).toBe(409);
      expect(
        (
          await postCsv(
            api,
            `/api/modules/${mod.id}/roster/import`,
            given.token,
            'user,role\nann,Student\nnobody,Tutor\n',
          )
        ).status,
      ).toBe(422);
      expect(
        (
          await api.post('/api/users', {
            token: given.token,
            body: { username: 'ann', email: 'x@example.edu', password: 'correct-horse-battery' },
          })
        ).status,
      ).toBe(409);
      expect((await api.delete(`/api/users/${given.admin.id}`, { token: given.token })).status).not.toBe(200);
      expect((await readAll(start)).events).toEqual([]);
    });
  });
}
