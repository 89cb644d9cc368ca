import { type DataSource, type EntityManager } from 'typeorm';
import { toPaging } from '../src/core/query.js';
import { CourseModulesRepository } from '../src/course-modules/modules/course-modules.repository.js';
import { ModuleReadsRepository } from '../src/course-modules/modules/module-reads.repository.js';
import {
  MemberListsRepository,
  personnelListQuery,
} from '../src/course-modules/membership/member-lists.repository.js';
import { ModuleRolesRepository } from '../src/course-modules/membership/module-roles.repository.js';
import { UserModuleRole } from '../src/course-modules/membership/user-module-role.entity.js';
import { CourseModule } from '../src/course-modules/modules/course-module.entity.js';
import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import { User } from '../src/users/user.entity.js';
import { UserBulkRepository } from '../src/users/user-bulk.repository.js';
import { UserListRepository, type UserPageJson } from '../src/users/user-list.repository.js';
import { toUserAccount } from '../src/users/user.mapper.js';
import { type UserAccount } from '../src/users/user.shape.js';
import { UsersRepository } from '../src/users/users.repository.js';
import { assignRole, makeModule, makeUser } from './support/factories.js';
import { useIntegrationModule } from './support/nest-testing.js';
import { poolOf } from './support/pool.js';

/** The statements `work` sends through `manager`, as their first words. */
async function statementsOf<T>(manager: EntityManager, work: () => Promise<T>): Promise<[T, string[]]> {
  const statements: string[] = [];
  const original = manager.query.bind(manager);
  manager.query = ((sql: string, parameters?: unknown[]) => {
    statements.push(sql.replace(/\s+/g, ' ').trim());
    return original(sql, parameters);
  }) as EntityManager['query'];
  try {
    return [await work(), statements];
  } finally {
    manager.query = original;
  }
}

/** The statements `work` sends straight to the data source's `pg` pool, with their names (unnamed: undefined). */
async function poolStatementsOf<T>(
  dataSource: DataSource,
  work: () => Promise<T>,
): Promise<[T, { text: string; name?: string }[]]> {
  const pool: { query: (config: { text: string; name?: string }) => unknown } = poolOf(dataSource);
  const statements: { text: string; name?: string }[] = [];
  const original = pool.query.bind(pool);
  pool.query = (config: { text: string; name?: string }) => {
    statements.push({ text: config.text.replace(/\s+/g, ' ').trim(), name: config.name });
    return original(config);
  };
  try {
    return [await work(), statements];
  } finally {
    pool.query = original;
  }
}

/** A node of `EXPLAIN (ANALYZE, FORMAT JSON)`: the fields the tests read. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
const planNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(planNodes)];

/** The repositories on a testing module of their own (test/support/nest-testing.ts): no HTTP, no service. */
describe('repositories against PostgreSQL', () => {
  const nest = useIntegrationModule({
    providers: [
      CourseModulesRepository,
      ModuleReadsRepository,
      ModuleRolesRepository,
      MemberListsRepository,
      UserListRepository,
      UserBulkRepository,
      UsersRepository,
    ],
    entities: [CourseModule, UserModuleRole, User],
  });
  let dataSource: DataSource;
  beforeEach(async () => {
    await nest.reset();
    dataSource = nest.dataSource;
  });
  const get = nest.get;

  describe(CourseModulesRepository.name, () => {
    it('deletes any number of modules with their dependents in the same five statements', async () => {
      const modules = get(CourseModulesRepository);
      const user = await makeUser(dataSource);
      for (const count of [1, 40]) {
        const ids: string[] = [];
        for (let i = 0; i < count; i++) {
          const module = await makeModule(dataSource);
          await assignRole(dataSource, user.id, module.id, ModuleRole.Student);
          ids.push(String(module.id));
        }
        const [deleted, statements] = await dataSource.transaction((manager) =>
          statementsOf(manager, () => modules.deleteWithDependents([...ids, '999999999'], manager)),
        );
        expect(deleted.ids.sort()).toEqual([...ids].sort());
        expect(statements.map((sql) => sql.split(' WHERE')[0])).toEqual([
          'SELECT m.id::text AS id, m.code, m.year FROM modules m',
          'DELETE FROM assignment_files',
          'DELETE FROM assignments',
          'DELETE FROM user_module_roles',
          'DELETE FROM modules',
        ]);
        expect(await modules.existingIds(ids)).toEqual(new Set());
        const [{ n }] = await dataSource.query<{ n: number }[]>(
          `SELECT count(*) AS n FROM user_module_roles WHERE user_id = $1`,
          [user.id],
        );
        expect(n).toBe(0);
      }
    });

    it('stops after the locking read when none of the modules exists', async () => {
      const modules = get(CourseModulesRepository);
      const [deleted, statements] = await dataSource.transaction((manager) =>
        statementsOf(manager, () => modules.deleteWithDependents(['123456789'], manager)),
      );
      expect(deleted).toEqual({ ids: [], modules: [], storageKeys: [] });
      expect(statements).toHaveLength(1);
    });

    it('locks in id order, so deletes of one set named in opposite orders never deadlock', async () => {
      const modules = get(CourseModulesRepository);
      for (let round = 0; round < 5; round++) {
        const ids: string[] = [];
        for (let i = 0; i < 6; i++) ids.push(String((await makeModule(dataSource)).id));
        const results = await Promise.all([
          dataSource.transaction((manager) => modules.deleteWithDependents(ids, manager)),
          dataSource.transaction((manager) => modules.deleteWithDependents([...ids].reverse(), manager)),
        ]);
        // The second to get the locks finds the modules gone: every module is deleted exactly once.
        expect(results.map((result) => result.ids.length).sort()).toEqual([0, 6]);
      }
    });
  });

  describe(ModuleReadsRepository.name, () => {
    it('returns the page and the total in one prepared statement, and the total past the last page', async () => {
      const modules = get(ModuleReadsRepository);
      for (let i = 0; i < 3; i++) await makeModule(dataSource);
      const [page, statements] = await poolStatementsOf(dataSource, () =>
        modules.page({ sort: [], paging: toPaging(1, 2) }),
      );
      expect(statements).toHaveLength(1);
      expect(statements[0].name).toEqual(expect.any(String));
      expect((JSON.parse(`[${page.modulesJson}]`) as { code: string }[]).map((m) => m.code)).toHaveLength(2);
      expect(page.total).toBe(3);
      expect(await modules.page({ sort: [], paging: toPaging(9, 2) })).toMatchObject({
        modulesJson: '',
        total: 3,
      });
    });

    it('sends a search unnamed, so PostgreSQL plans it for its own pattern and never on a generic plan', async () => {
      const modules = get(ModuleReadsRepository);
      await makeModule(dataSource, { code: 'CHEM101', description: 'Organic chemistry' });
      // More than the five runs after which PostgreSQL may keep a named statement's generic plan.
      for (const filter of [{ query: 'chemistry' }, { code: 'CHEM' }, { query: 'chemistry', code: 'CH' }]) {
        for (let run = 0; run < 7; run++) {
          const [page, statements] = await poolStatementsOf(dataSource, () =>
            modules.page({ ...filter, sort: [], paging: toPaging(1, 20) }),
          );
          expect(page.total).toBe(1);
          expect(statements.map((statement) => statement.name)).toEqual([undefined]);
        }
      }
    });

    it('counts a filtered total only when module_stats has moved past the known version', async () => {
      const modules = get(ModuleReadsRepository);
      await makeModule(dataSource, { description: 'Organic chemistry' });
      const filter = { query: 'chemistry', sort: [], paging: toPaging(1, 20) };
      const first = await modules.page(filter);
      expect(first.total).toBe(1);
      expect(await modules.page({ ...filter, knownVersion: first.version })).toMatchObject({ total: null });
      await makeModule(dataSource, { description: 'Physical chemistry' });
      expect(await modules.page({ ...filter, knownVersion: first.version })).toMatchObject({ total: 2 });
    });
  });

  describe(MemberListsRepository.name, () => {
    it('pages personnel and eligible users with their totals in one statement each', async () => {
      const roles = get(MemberListsRepository);
      const module = await makeModule(dataSource);
      const lecturer = await makeUser(dataSource, { username: 'ann' });
      await makeUser(dataSource, { username: 'bob' });
      await makeUser(dataSource, { username: 'cy' });
      await assignRole(dataSource, lecturer.id, module.id, ModuleRole.Lecturer);
      const filter = { moduleId: String(module.id), sort: [], paging: toPaging(1, 1) };
      const [personnel, statements] = await statementsOf(dataSource.manager, () =>
        roles.personnelPage(filter),
      );
      expect(statements).toHaveLength(1);
      expect(personnel.total).toBe(1);
      expect(personnel.items.map((row) => [row.username, row.role])).toEqual([['ann', 'Lecturer']]);
      const eligible = await roles.eligiblePage(filter);
      expect(eligible.total).toBe(2);
      expect(eligible.items.map((row) => row.username)).toEqual(['bob']);
    });

    it('reads the first page of a big module from an index in its order, and its total without counting', async () => {
      const module = await makeModule(dataSource);
      const other = await makeModule(dataSource);
      // 3 000 members, and as many users in another module who sort among them.
      await dataSource.query(
        `INSERT INTO users (username, email)
         SELECT 'member' || lpad(i::text, 5, '0'), 'member' || i || '@x.test' FROM generate_series(1, 6000) i`,
      );
      await dataSource.query(
        `INSERT INTO user_module_roles (user_id, module_id, role)
         SELECT id, CASE WHEN id % 2 = 0 THEN $1::bigint ELSE $2::bigint END,
                CASE WHEN id % 100 = 0 THEN 'Tutor'::module_role ELSE 'Student' END
         FROM users WHERE username LIKE 'member%'`,
        [module.id, other.id],
      );
      await dataSource.query(`ANALYZE users, user_module_roles, module_member_counts`);
      const roles = get(MemberListsRepository);
      const members = await dataSource.query<{ id: number; username: string; role: ModuleRole }[]>(
        `SELECT u.id, u.username, r.role FROM user_module_roles r JOIN users u ON u.id = r.user_id
         WHERE r.module_id = $1 ORDER BY lower(u.username), u.id`,
        [module.id],
      );
      for (const role of [undefined, ModuleRole.Student]) {
        const filter = { moduleId: String(module.id), role, sort: [], paging: toPaging(1, 50) };
        const expected = members.filter((member) => role === undefined || member.role === role);
        const page = await roles.personnelPage(filter);
        expect(page.total).toBe(expected.length);
        expect(page.items.map((row) => row.username)).toEqual(
          expected.slice(0, 50).map((member) => member.username),
        );
        const { sql, params } = personnelListQuery(filter);
        const nodes = planNodes(
          (
            await dataSource.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
              `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
              params,
            )
          )[0]['QUERY PLAN'][0].Plan,
        );
        // No sort, no count: the role rows read are the page's own, from one index.
        expect(nodes.some((node) => /Sort/.test(node['Node Type']))).toBe(false);
        const roleRows = nodes.filter((node) => node['Relation Name'] === 'user_module_roles');
        expect(roleRows.map((node) => node['Index Name'])).toEqual([
          role ? 'ix_user_module_roles_module_role' : 'ix_user_module_roles_module_username',
        ]);
        expect(roleRows[0]['Actual Rows'] * roleRows[0]['Actual Loops']).toBeLessThanOrEqual(51);
        expect(nodes.some((node) => node['Relation Name'] === 'module_member_counts')).toBe(true);
      }
      // A rename moves the member to its new place, and the page reads the same rows.
      const last = members[members.length - 1];
      await dataSource.query(`UPDATE users SET username = 'Aaa' WHERE id = $1`, [last.id]);
      const renamed = await roles.personnelPage({
        moduleId: String(module.id),
        sort: [],
        paging: toPaging(1, 2),
      });
      expect(renamed.items.map((row) => row.username)).toEqual(['Aaa', members[0].username]);
    });
  });

  describe(ModuleRolesRepository.name, () => {
    it('reports the caller role, null without one, and undefined for a missing module', async () => {
      const roles = get(ModuleRolesRepository);
      const module = await makeModule(dataSource);
      const tutor = await makeUser(dataSource);
      const other = await makeUser(dataSource);
      await assignRole(dataSource, tutor.id, module.id, ModuleRole.Tutor);
      expect(await roles.callerRole(String(module.id), tutor.id)).toBe(ModuleRole.Tutor);
      expect(await roles.callerRole(String(module.id), other.id)).toBeNull();
      expect(await roles.callerRole('987654321', tutor.id)).toBeUndefined();
    });
  });

  describe(UserListRepository.name, () => {
    const itemsOf = (page: UserPageJson) => JSON.parse(`[${page.itemsJson}]`) as UserAccount[];

    it('returns the page as JSON text and the total in one statement, filtered, with ids as numbers', async () => {
      const users = get(UserListRepository);
      for (const username of ['alpha', 'alpine', 'beta']) await makeUser(dataSource, { username });
      const [page, statements] = await poolStatementsOf(dataSource, () =>
        users.page({ query: 'ALP', sort: [], paging: toPaging(1, 1) }),
      );
      expect(statements).toHaveLength(1);
      expect(page.total).toBe(2);
      const items = itemsOf(page);
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ username: 'alpha', id: expect.any(Number) });
      expect(await users.page({ query: 'alp', sort: [], paging: toPaging(5, 1) })).toEqual({
        itemsJson: '',
        total: 2,
      });
    });

    it("writes each user's JSON byte for byte as the mapper's admin view, in the page's order", async () => {
      const users = get(UserListRepository);
      const writer = get(UsersRepository);
      // Quotes, a backslash, control characters, non-Latin text, an emoji, nulls, an avatar, an external id.
      const odd = await writer.insert({
        username: 'zz.odd',
        email: 'zz.odd@x.test',
        passwordHash: null,
        admin: false,
        givenName: 'Zoë "Q" \\ \t\n\u0001\u001f',
        familyName: 'Ōkawa 😀 \u2028',
        displayName: null,
        externalId: 'ext/0001',
      });
      const plain = await writer.insert({
        username: 'zz.plain',
        email: 'zz.plain@x.test',
        passwordHash: null,
        admin: true,
      });
      await dataSource.query(`UPDATE users SET avatar_key = 'k' WHERE id = $1`, [plain.id]);
      const withAvatar = { ...plain, avatarKey: 'k' };
      const page = await users.page({
        query: 'zz.',
        sort: [{ column: 'lower(u.username)', descending: true }],
        paging: toPaging(1, 20),
      });
      expect(page.itemsJson).toBe(
        [withAvatar, odd].map((user) => JSON.stringify(toUserAccount(user))).join(','),
      );
    });

    it('reads the unfiltered total from user_stats, kept at every commit, in a named statement', async () => {
      const users = get(UserListRepository);
      const before = Number(
        (await dataSource.query<{ n: string }[]>(`SELECT count(*) AS n FROM users`))[0].n,
      );
      await makeUser(dataSource, { username: 'kept' });
      await dataSource.transaction(async (manager) => {
        await manager.query(
          `INSERT INTO users (username, email, admin) VALUES ('gone', 'gone@x.test', false)`,
        );
        await manager.query(`SAVEPOINT s`);
        await manager.query(
          `INSERT INTO users (username, email, admin) VALUES ('undone', 'undone@x.test', false)`,
        );
        await manager.query(`ROLLBACK TO SAVEPOINT s`);
        await manager.query(`DELETE FROM users WHERE username = 'gone'`);
      });
      const [page, statements] = await poolStatementsOf(dataSource, () =>
        users.page({ sort: [], paging: toPaging(1, 20) }),
      );
      expect(page.total).toBe(before + 1);
      expect(statements).toHaveLength(1);
      expect(statements[0].name).toEqual(expect.any(String));
      expect(statements[0].text).toContain('FROM user_stats s');
      expect(statements[0].text).not.toContain('count(*)');
    });

    it('sends a text search unnamed, so PostgreSQL plans it for its own pattern and never on a generic plan', async () => {
      const users = get(UserListRepository);
      await makeUser(dataSource, { username: 'Marie.Curie', email: 'mc@radium.test' });
      // More than the five runs after which PostgreSQL may keep a named statement's generic plan.
      for (const filter of [{ query: 'curie' }, { username: 'MARIE' }, { email: 'RADIUM' }]) {
        for (let run = 0; run < 7; run++) {
          const [page, statements] = await poolStatementsOf(dataSource, () =>
            users.page({ ...filter, sort: [], paging: toPaging(1, 20) }),
          );
          expect(page.total).toBe(1);
          expect(statements.map((statement) => statement.name)).toEqual([undefined]);
        }
      }
    });

    it('matches each field on its own, never across two fields in the searched text', async () => {
      const users = get(UserListRepository);
      await makeUser(dataSource, { username: 'ann', email: 'bee@x.test' });
      expect((await users.page({ query: 'ann bee', sort: [], paging: toPaging(1, 20) })).total).toBe(0);
      expect((await users.page({ username: 'bee', sort: [], paging: toPaging(1, 20) })).total).toBe(0);
      expect((await users.page({ email: 'ann', sort: [], paging: toPaging(1, 20) })).total).toBe(0);
      expect((await users.page({ email: 'BEE@', sort: [], paging: toPaging(1, 20) })).total).toBe(1);
    });

    it('counts a filtered total again only after a write to users', async () => {
      const users = get(UserListRepository);
      await makeUser(dataSource, { username: 'chem.one' });
      const filter = { query: 'chem', sort: [], paging: toPaging(1, 20) };
      expect((await users.page(filter)).total).toBe(1);
      // A row written with the triggers off leaves user_stats' version alone: the remembered total stands.
      await dataSource.transaction(async (manager) => {
        await manager.query(`SET LOCAL session_replication_role = replica`);
        await manager.query(
          `INSERT INTO users (username, email, admin) VALUES ('chem.hidden', 'h@x.test', false)`,
        );
      });
      const remembered = await users.page(filter);
      expect(remembered.total).toBe(1);
      expect(itemsOf(remembered)).toHaveLength(2);
      await makeUser(dataSource, { username: 'chem.two' });
      expect((await users.page(filter)).total).toBe(3);
      await dataSource.query(
        `UPDATE users SET username = 'phys.two', email = 'phys.two@x.test' WHERE username = 'chem.two'`,
      );
      expect((await users.page(filter)).total).toBe(2);
      await dataSource.query(`DELETE FROM users WHERE username LIKE 'chem.%'`);
      expect((await users.page(filter)).total).toBe(0);
    });
  });

  describe(UserBulkRepository.name, () => {
    it('locks only the existing users among the ids', async () => {
      const users = get(UserBulkRepository);
      const user = await makeUser(dataSource);
      const existing = await dataSource.transaction((manager) =>
        users.lockExisting([String(user.id), '888888888'], manager),
      );
      expect(existing).toEqual(new Set([String(user.id)]));
    });
  });
});
