import { toPaging } from '../core/query.js';
import { moduleListQuery } from './course-modules.repository.js';
import { eligibleUsersQuery, personnelListQuery } from './module-roles.repository.js';
import { ModuleRole } from './module-role.js';

const paging = toPaging(2, 10);
const squash = (sql: string) => sql.replace(/\s+/g, ' ');

describe('moduleListQuery', () => {
  it('lists every module for an admin, with no visibility condition', () => {
    const { sql, params } = moduleListQuery({ sort: [], paging });
    expect(squash(sql)).not.toContain('WHERE');
    expect(squash(sql)).toContain('ORDER BY m.id ASC LIMIT $1 OFFSET $2');
    expect(params).toEqual([10, 10]);
  });

  it('limits a non-admin to modules where they hold a role, inside the SQL', () => {
    const { sql, params } = moduleListQuery({ memberId: 42, sort: [], paging });
    expect(squash(sql)).toContain(
      'WHERE EXISTS (SELECT 1 FROM user_module_roles r WHERE r.user_id = $1 AND r.module_id = m.id)',
    );
    expect(params[0]).toBe(42);
  });

  it('passes text filters as escaped literal patterns, never as SQL', () => {
    const { sql, params } = moduleListQuery({
      memberId: 1,
      query: "50%_\\'",
      code: 'cs',
      year: 2026,
      sort: [{ column: 'm.year', descending: true }],
      paging,
    });
    expect(squash(sql)).toContain(
      '(m.code ILIKE $2 OR m.description ILIKE $2) AND m.code ILIKE $3 AND m.year = $4 ORDER BY m.year DESC NULLS LAST, m.id ASC LIMIT $5 OFFSET $6',
    );
    expect(params).toEqual([1, "%50\\%\\_\\\\'%", '%cs%', 2026, 10, 10]);
  });
});

describe('user list queries', () => {
  it('filters personnel by module, role and text, ordered by username by default', () => {
    const { sql, params } = personnelListQuery({
      moduleId: '9',
      role: ModuleRole.Tutor,
      query: 'ann',
      sort: [],
      paging,
    });
    expect(squash(sql)).toContain(
      'WHERE r.module_id = $1 AND r.role = $2 AND (u.username ILIKE $3 OR u.email ILIKE $3) ORDER BY lower(u.username) ASC NULLS LAST, u.id ASC',
    );
    expect(params).toEqual(['9', 'Tutor', '%ann%', 10, 10]);
  });

  it('finds eligible users as those with no role in the module', () => {
    const { sql, params } = eligibleUsersQuery({ moduleId: '9', sort: [], paging });
    expect(squash(sql)).toContain(
      'WHERE NOT EXISTS (SELECT 1 FROM user_module_roles r WHERE r.user_id = u.id AND r.module_id = $1)',
    );
    expect(params).toEqual(['9', 10, 10]);
  });
});
