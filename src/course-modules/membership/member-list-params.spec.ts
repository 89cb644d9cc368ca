import { ValidationFailed } from '../../core/errors.js';
import { ModuleRole } from '../modules/module-role.js';
import { readUserListParams } from './member-list-params.js';

describe('readUserListParams', () => {
  it('reads role in any accepted spelling when asked to', () => {
    expect(readUserListParams({ role: 'assistant_lecturer' }, true).role).toBe(ModuleRole.AssistantLecturer);
    expect(readUserListParams({ role: 'bogus' }, false).role).toBeUndefined();
  });

  it('rejects an unknown role after the paging errors, and sorts over user fields', () => {
    expect(() => readUserListParams({ per_page: 'x', role: 'Dean' }, true)).toThrow(
      new ValidationFailed(
        'per_page must be an integer; role must be one of Lecturer, AssistantLecturer, Tutor, Student',
      ),
    );
    expect(readUserListParams({ sort: '-username,email' }, true).sort).toEqual([
      { column: 'lower(u.username)', descending: true },
      { column: 'u.email', descending: false },
    ]);
    expect(() => readUserListParams({ sort: 'code' }, false)).toThrow(
      new ValidationFailed('Invalid field used for sorting'),
    );
  });
});
