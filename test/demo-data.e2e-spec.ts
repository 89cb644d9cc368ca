import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { sniffImageType } from '../src/users/image-type.js';
import { UsersService } from '../src/users/users.service.js';
import { DEMO_COMMON_WORD, DEMO_RARE_WORD, demoSizes, seedDemoData } from '../src/database/demo-data.js';
import { useTestApp } from './support/app.js';
import { makeUser, tokenFor } from './support/factories.js';

// The generator behind `npm run seed:demo` and the benchmark's data, on the real test database.
describe('demo data', () => {
  const { app, api } = useTestApp();
  beforeEach(() => app.reset());

  const scale = 0.5;
  const seed = () =>
    seedDemoData(app.dataSource, {
      scale,
      users: app.service.app.get(UsersService),
      passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$not-a-real-hash-for-this-test',
      storageDir: app.config.storageDir,
    });

  it('fills every table in the stated proportions, and a second run adds nothing', async () => {
    const size = demoSizes(scale);
    const admin = await makeUser(app.dataSource, { admin: true });
    const first = await seed();
    expect(first.inserted).toEqual({ users: size.users, modules: size.modules, roles: first.roles });
    expect(first.modules).toBe(size.modules);
    expect(first.roles).toBeGreaterThan(size.modules * 3);
    expect(first.avatars).toBeGreaterThan(0);

    const byRole = await app.dataSource.query<{ role: string; modules: number; people: number }[]>(
      `SELECT role::text AS role, count(DISTINCT module_id)::int AS modules, count(DISTINCT user_id)::int AS people
       FROM user_module_roles GROUP BY role`,
    );
    const of = (role: string) => byRole.find((row) => row.role === role)!;
    // Every module has a lecturer; staff and students are distinct people in the stated numbers.
    expect(of('Lecturer').modules).toBe(size.modules);
    expect(of('Lecturer').people).toBeLessThanOrEqual(size.lecturers);
    expect(of('Student').people).toBe(size.students);
    // Written with the triggers off (a superuser skips the foreign keys' checks), the role rows still carry their
    // users' lower-cased usernames and every module its member counts (migration MemberListsAtScale).
    const [derived] = await app.dataSource.query<{ keys: number; counts: number }[]>(
      `SELECT (SELECT count(*)::int FROM user_module_roles r JOIN users u ON u.id = r.user_id
               WHERE r.username_key IS DISTINCT FROM lower(u.username)) AS keys,
              (SELECT count(*)::int FROM (SELECT module_id, role, count(*) AS n FROM user_module_roles GROUP BY 1, 2) x
               FULL JOIN module_member_counts c USING (module_id, role)
               WHERE x.n IS DISTINCT FROM c.members) AS counts`,
    );
    expect(derived).toEqual({ keys: 0, counts: 0 });

    const [words] = await app.dataSource.query<{ common: number; rare: number }[]>(
      `SELECT count(*) FILTER (WHERE description ILIKE $1)::int AS common,
              count(*) FILTER (WHERE description ILIKE $2)::int AS rare FROM modules`,
      [`%${DEMO_COMMON_WORD}%`, `%${DEMO_RARE_WORD}%`],
    );
    expect(words.common / size.modules).toBeGreaterThan(0.15);
    expect(words.common / size.modules).toBeLessThan(0.25);
    expect(words.rare).toBeGreaterThan(0);
    expect(words.rare / size.modules).toBeLessThan(0.01);

    // The latest year is not rolled over yet: the rollover of docs/api.md §13 has its staff to copy.
    const latest = new Date().getUTCFullYear();
    expect(first.rollover).toEqual({
      fromYear: latest,
      toYear: latest + 1,
      modules: expect.any(Number),
      alreadyRolledOver: 0,
    });
    expect(first.rollover.modules).toBeGreaterThan(0);
    const dry = await api.post('/api/modules/rollover?dry_run=true', {
      token: tokenFor(admin),
      body: { from_year: latest, to_year: latest + 1 },
    });
    expect(dry.body.data).toMatchObject({ created: first.rollover.modules, existing: 0, missing: 0 });
    // Every module has a lecturer, every second an assistant lecturer, two in three a tutor.
    expect(dry.body.data.members_copied).toBeGreaterThan(first.rollover.modules * 2);

    const second = await seed();
    expect(second.inserted).toEqual({ users: 0, modules: 0, roles: 0 });
    expect(second.avatars).toBe(0);
    expect([second.users, second.modules, second.roles]).toEqual([first.users, first.modules, first.roles]);
  });

  it('gives avatars that the API serves as images', async () => {
    await seed();
    const [user] = await app.dataSource.query<{ id: string; avatar_key: string }[]>(
      `SELECT id::text AS id, avatar_key FROM users WHERE avatar_key IS NOT NULL ORDER BY id LIMIT 1`,
    );
    const file = await readFile(path.join(app.config.storageDir, user.avatar_key));
    expect(sniffImageType(file)).toBe('image/png');
    const admin = await makeUser(app.dataSource, { admin: true });
    const res = await api.get(`/api/users/${user.id}/avatar`, { token: tokenFor(admin) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
  });
});
