import { toPaging } from '../../core/query.js';
import { ModuleRole } from '../modules/module-role.js';
import { eligibleUsersQuery, personnelListQuery } from './member-lists.repository.js';

/** What docs/sql/ cannot show (see modules/repository-queries.spec.ts): which values travel as parameters. */
const paging = toPaging(2, 10);

describe('user list queries', () => {
  it('filters personnel by module, role and text, ordered by username by default', () => {
    const { sql, params } = personnelListQuery({
      moduleId: '9',
      role: ModuleRole.Tutor,
      query: 'ann',
      sort: [],
      paging,
    });
    expect(sql).not.toMatch(/ann|Tutor/);
    expect(params).toEqual(['9', 'Tutor', '%ann%', 10, 10]);
  });

  it('finds eligible users as the active ones with no role in the module', () => {
    const { sql, params } = eligibleUsersQuery({ moduleId: '9', sort: [], paging });
    expect(sql.replace(/\s+/g, ' ')).toContain('u.active AND NOT EXISTS');
    expect(params).toEqual(['9', 10, 10]);
  });
});
