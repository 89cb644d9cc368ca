// Part of test/authorization-matrix.e2e-spec.ts: a non-member can neither read nor change a module.
import { type RequestBodyObject } from '@nestjs/swagger';
import {
  assignRole,
  failure,
  makeModule,
  makeUser,
  ModuleRole,
  type ModuleRow,
  PERMISSION_DENIED,
  populatedModule,
  rowsOfModule,
  storedFiles,
  tokenFor,
  type UserRow,
} from '../../support/modules-fixtures.js';
import { deref, type DocOperation } from '../../support/openapi.js';
import { type MatrixContext } from './context.js';
import { applyLifecycle } from './personas.js';
import { concrete } from './requests.js';

export function objectLevelTests(ctx: MatrixContext): void {
  const { app, given, send, fixtureOn, bearer, successStatuses, rowsInOrder, describeAnswer } = ctx;

  describe('object level: a non-member can neither read nor change a module', () => {
    let module: ModuleRow;
    let members: Record<ModuleRole, UserRow>;
    let outsiders: { name: string; user: UserRow }[];

    beforeAll(async () => {
      const ds = app.dataSource;
      ({ module, members } = await populatedModule(app, Object.values(ModuleRole), ['coursework']));
      // A user with no role anywhere, and the Lecturer of another module.
      const other = await makeModule(ds);
      const otherLecturer = await makeUser(ds);
      await assignRole(ds, otherLecturer.id, other.id, ModuleRole.Lecturer);
      // Lecturers of the module itself whose membership grants nothing (docs/api.md §15).
      const upcoming = await makeUser(ds);
      const inactive = await makeUser(ds);
      await assignRole(ds, upcoming.id, module.id, ModuleRole.Lecturer);
      await assignRole(ds, inactive.id, module.id, ModuleRole.Lecturer);
      await applyLifecycle(app, 'lecturer_upcoming', upcoming.id, module.id);
      await applyLifecycle(app, 'lecturer_inactive', inactive.id, module.id);
      outsiders = [
        { name: 'a user with no role', user: await makeUser(ds) },
        { name: "another module's Lecturer", user: otherLecturer },
        { name: 'an upcoming Lecturer of the module', user: upcoming },
        { name: 'an inactive Lecturer of the module', user: inactive },
      ];
    });

    /** The module as an admin reads it, its role rows, files and the audit trail. */
    async function snapshot() {
      const adminAuth = bearer(tokenFor(given.users.admin));
      const read = await send('GET', `/api/modules/${module.id}`, {}, adminAuth);
      const roster = await send('GET', `/api/modules/${module.id}/roster.csv`, {}, adminAuth);
      const roles = await app.dataSource.query(
        `SELECT user_id::int, role FROM user_module_roles WHERE module_id = $1 ORDER BY user_id`,
        [module.id],
      );
      const [{ events }] = await app.dataSource.query(`SELECT count(*)::int AS events FROM audit_events`);
      return {
        read: [read.status, read.body],
        roster: [roster.status, roster.body],
        roles,
        rows: await rowsOfModule(app.dataSource, module.id),
        files: await storedFiles(app.config.storageDir),
        events,
      };
    }

    /** Operations that address a module: by path id, or by a `module_ids` list in the body. */
    function addressesModule(operation: DocOperation): boolean {
      if (operation.path.includes('{module_id}')) return true;
      const body = operation.operation.requestBody as RequestBodyObject | undefined;
      const schema = body?.content?.['application/json']?.schema;
      return schema !== undefined && 'module_ids' in (deref(given.document, schema).properties ?? {});
    }

    it('refuses every operation addressing the module with 403 and changes nothing', async () => {
      const before = await snapshot();
      const addressing = rowsInOrder().filter(({ operation }) => addressesModule(operation));
      expect(addressing.map(({ key }) => key)).toEqual(
        expect.arrayContaining([
          'GET /api/modules/{module_id}',
          'PUT /api/modules/{module_id}',
          'DELETE /api/modules/{module_id}',
          'DELETE /api/modules/bulk',
          'POST /api/modules/{module_id}/roster/import',
          'GET /api/modules/{module_id}/roster.csv',
        ]),
      );
      const wrong: string[] = [];
      for (const { operation, key, row } of addressing) {
        for (const { name, user } of outsiders) {
          // The target is a member holding the role a removal needs, or else the outsider (adding themselves).
          const target = row.targetRole ? members[row.targetRole] : user;
          const { path, built } = concrete(operation, row, fixtureOn(module, target));
          const answer = await send(operation.method, path, built, bearer(tokenFor(user)));
          if (
            answer.status !== 403 ||
            JSON.stringify(answer.body) !== JSON.stringify(failure(PERMISSION_DENIED))
          ) {
            wrong.push(`${key} as ${name} → ${describeAnswer(answer)}`);
          }
        }
      }
      expect(wrong).toEqual([]);
      expect(await snapshot()).toEqual(before);
    });

    it('never shows the module to a non-member through any operation they may call', async () => {
      const before = await snapshot();
      const leaks: string[] = [];
      for (const { operation, key, row } of rowsInOrder()) {
        if (row.allowed === 'public' || !row.allowed.includes('nobody') || row.last) continue;
        for (const { name, user } of outsiders) {
          const { path, built } = concrete(operation, row, fixtureOn(module, user));
          for (const query of ['', `query=${module.code}`, `code=${module.code}`]) {
            const answer = await send(operation.method, path, { ...built, query }, bearer(tokenFor(user)));
            if (!successStatuses(operation).includes(answer.status)) {
              leaks.push(`${key}?${query} as ${name}: expected success → ${describeAnswer(answer)}`);
            }
            const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
            if (text.includes(module.code)) leaks.push(`${key}?${query} as ${name} shows ${module.code}`);
          }
        }
      }
      expect(leaks).toEqual([]);
      expect(await snapshot()).toEqual(before);
    });
  });
}
