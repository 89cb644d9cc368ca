import { type SortKey, toPaging } from '../../core/query.js';
import { moduleListQuery } from './course-modules.repository.js';
import { eligibleUsersQuery, personnelListQuery } from '../membership/module-roles.repository.js';
import { ModuleRole } from '../membership/module-role.js';

const paging = toPaging(2, 10);
const squash = (sql: string) => sql.replace(/\s+/g, ' ');

describe('moduleListQuery', () => {
  it('lists every module for an admin, with no visibility condition', () => {
    const { sql, params } = moduleListQuery({ sort: [], paging });
    expect(squash(sql)).not.toContain('WHERE');
    expect(squash(sql)).toContain('ORDER BY m.id ASC LIMIT $1 OFFSET $2');
    expect(params).toEqual([10, 10]);
  });

  it('limits a non-admin to modules where they hold an active or completed role, inside the SQL', () => {
    const { sql, params } = moduleListQuery({ memberId: 42, sort: [], paging });
    expect(squash(sql)).toContain(
      'WHERE EXISTS (SELECT 1 FROM user_module_roles r WHERE r.user_id = $1 AND r.module_id = m.id AND ' +
        "membership_effective(r.status, r.starts_at, r.ends_at, now()) IN ('active', 'completed'))",
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
      '(lower(m.code) LIKE lower($2) OR lower(m.description) LIKE lower($2)) AND lower(m.code) LIKE lower($3) AND m.year = $4 ORDER BY m.year DESC NULLS LAST, m.id ASC LIMIT $5 OFFSET $6',
    );
    expect(params).toEqual([1, "%50\\%\\_\\\\'%", '%cs%', 2026, 10, 10]);
  });

  it('builds the same text for the same shape of list and another for each other shape, whatever the values', () => {
    const sorts: SortKey[][] = [
      [],
      [{ column: 'm.year', descending: true }],
      [{ column: 'm.year', descending: false }],
      [
        { column: 'm.code', descending: false },
        { column: 'm.year', descending: true },
      ],
    ];
    const texts = new Set<string>();
    // Twice over every shape, with other values the second time: the second pass reads the texts kept by the first.
    for (const round of [1, 2]) {
      for (let flags = 0; flags < 16; flags++) {
        for (const sort of sorts) {
          const filter = {
            memberId: flags & 1 ? round : undefined,
            query: flags & 2 ? `word${round}` : undefined,
            code: flags & 4 ? `cs${round}` : undefined,
            year: flags & 8 ? 2020 + round : undefined,
            sort,
            paging: toPaging(round, 10),
          };
          const { sql, params } = moduleListQuery(filter);
          const text = squash(sql);
          const placeholders = new Set(text.match(/\$\d+/g));
          expect(placeholders.size).toBe(params.length);
          expect(text.includes('user_module_roles')).toBe(filter.memberId !== undefined);
          expect(text.includes('lower(m.description) LIKE')).toBe(filter.query !== undefined);
          expect(text.includes('lower(m.code) LIKE')).toBe(
            filter.query !== undefined || filter.code !== undefined,
          );
          expect(text.includes('m.year =')).toBe(filter.year !== undefined);
          const order = sort
            .map((key) => `${key.column} ${key.descending ? 'DESC' : 'ASC'} NULLS LAST, `)
            .join('');
          expect(text).toContain(`ORDER BY ${order}m.id ASC LIMIT`);
          const filtered = [
            filter.query === undefined ? [] : [`%${filter.query}%`],
            filter.code === undefined ? [] : [`%${filter.code}%`],
            filter.year === undefined ? [] : [filter.year],
          ].flat();
          const counted =
            filter.memberId !== undefined
              ? [filter.memberId, ...filtered]
              : filtered.length > 0
                ? [...filtered, -1] // the known version of a filtered admin total: none
                : [];
          expect(params).toEqual([...counted, 10, (round - 1) * 10]);
          texts.add(sql);
        }
      }
    }
    expect(texts.size).toBe(16 * sorts.length);
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

  it('finds eligible users as the active ones with no role in the module', () => {
    const { sql, params } = eligibleUsersQuery({ moduleId: '9', sort: [], paging });
    expect(squash(sql)).toContain(
      'WHERE u.active AND NOT EXISTS (SELECT 1 FROM user_module_roles r WHERE r.user_id = u.id AND r.module_id = $1)',
    );
    expect(params).toEqual(['9', 10, 10]);
  });
});
