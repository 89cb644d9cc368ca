import { contractFields } from '../../../test/support/contract-text.js';
import { namedSchemas } from '../../openapi/openapi.js';
import { storedUser } from '../../testing/fakes.js';
import { toUserAccount, toUserSummary } from '../../users/user.mapper.js';
import '../../users/user.schemas.js';
import { USER_ACCOUNT_FIELDS, USER_DELETED_FIELDS, USER_SUMMARY_FIELDS } from '../../users/user.shape.js';
import { moduleJson } from './course-modules.repository.js';
import {
  moduleWithPersonnelJson,
  type ModuleSource,
  type PersonnelJson,
  toModuleResponse,
} from './module.mapper.js';
import { USER_ACCOUNT_JSON, USER_SUMMARY_JSON } from '../../users/user-summary-json.js';
import './module.schemas.js';
import { MODULE_DELETED_FIELDS, MODULE_FIELDS } from './module.shape.js';

const at = new Date('2026-11-21T08:41:00.123Z');
const module = (id: number, code = `ABC${id}`): ModuleSource => ({
  id,
  code,
  year: 2026,
  description: null,
  credits: 15,
  createdAt: at,
  updatedAt: new Date(at.getTime() + 1000),
});
const user = storedUser(3, 'ada', { givenName: 'Ada', familyName: 'Lovelace', externalId: 'x-1' });

describe('toModuleResponse', () => {
  it('maps to the wire shape with RFC 3339 millisecond timestamps', () => {
    expect(toModuleResponse({ ...module(7), id: '7' as unknown as number })).toEqual({
      id: 7,
      code: 'ABC7',
      year: 2026,
      description: null,
      credits: 15,
      created_at: '2026-11-21T08:41:00.123Z',
      updated_at: '2026-11-21T08:41:01.123Z',
    });
  });
});

describe('moduleWithPersonnelJson', () => {
  it('splices the four lists into the Module and takes them out of the driver’s row', () => {
    const row: PersonnelJson = {
      lecturers: '{"id":1}',
      assistants: '',
      tutors: '{"id":2},{"id":3}',
      students: '{"id":4}',
    };
    const text = moduleWithPersonnelJson('{"id":7,"code":"ABC7"}', row);
    expect(JSON.parse(text.parts.join(''))).toEqual({
      id: 7,
      code: 'ABC7',
      lecturers: [{ id: 1 }],
      assistant_lecturers: [],
      tutors: [{ id: 2 }, { id: 3 }],
      students: [{ id: 4 }],
    });
    // The row no longer holds the lists: whatever still reaches it keeps no large string alive.
    expect(row).toEqual({ lecturers: '', assistants: '', tutors: '', students: '' });
    // Released once sent: the text keeps nothing either.
    text.release();
    expect(text.parts).toEqual([]);
  });
});

/** The keys a `row_to_json` sub-select writes, in order: each select item's alias, or its column's name. */
function jsonKeys(sqlFragment: string): string[] {
  const text = sqlFragment.trim();
  const select = /^SELECT ([\s\S]*)\) x\)$/.exec(text.slice(text.lastIndexOf('SELECT ')))![1];
  const items: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of select) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      items.push(current.trim());
      current = '';
    } else current += char;
  }
  items.push(current.trim());
  return items.map((item) => /\bAS (\w+)$/.exec(item)?.[1] ?? item.split('.').pop()!);
}

const schemaOf = (name: string) => namedSchemas[name] as { required: string[]; properties: object };

/**
 * The field tuples (module.shape.ts, user.shape.ts) are the single source; the compiler holds the mapper, the
 * SQL and the schema to their fields, these tests to their order, and the contract's text holds the tuples.
 */
describe('the field tuples are the contract', () => {
  it('in the order docs/api.md writes them', () => {
    expect(MODULE_FIELDS).toEqual(contractFields('- **Module**:'));
    expect(USER_SUMMARY_FIELDS).toEqual(contractFields('- **User summary**:'));
    // The admin view: the summary's fields, then external_id, "last, after `avatar_url`".
    expect(USER_ACCOUNT_FIELDS).toEqual([...contractFields('- **User summary**:'), 'external_id']);
    expect(MODULE_DELETED_FIELDS).toEqual(contractFields('| `module.deleted`', '## 12.'));
    expect(USER_DELETED_FIELDS).toEqual(contractFields('| `user.deleted`', '## 12.'));
  });
});

describe('one Module shape', () => {
  it('is what the mapper, the JSON built in SQL and the OpenAPI schema write, in the same order', () => {
    expect(Object.keys(toModuleResponse(module(1)))).toEqual(MODULE_FIELDS);
    expect(jsonKeys(moduleJson('page'))).toEqual(MODULE_FIELDS);
    expect(schemaOf('Module').required).toEqual(MODULE_FIELDS);
    expect(Object.keys(schemaOf('Module').properties)).toEqual(MODULE_FIELDS);
    expect(Object.keys(schemaOf('ModuleDeleted').properties)).toEqual(MODULE_DELETED_FIELDS);
  });
});

describe('one User summary shape', () => {
  it('is what the mapper, the JSON built in SQL and the OpenAPI schema write, in the same order', () => {
    expect(Object.keys(toUserSummary(user))).toEqual(USER_SUMMARY_FIELDS);
    expect(jsonKeys(USER_SUMMARY_JSON)).toEqual(USER_SUMMARY_FIELDS);
    expect(schemaOf('UserSummary').required).toEqual(USER_SUMMARY_FIELDS);
    expect(Object.keys(schemaOf('UserSummary').properties)).toEqual(USER_SUMMARY_FIELDS);
    expect(Object.keys(toUserAccount(user))).toEqual(USER_ACCOUNT_FIELDS);
    expect(jsonKeys(USER_ACCOUNT_JSON)).toEqual(USER_ACCOUNT_FIELDS);
    expect(schemaOf('UserAccount').required).toEqual(USER_ACCOUNT_FIELDS);
    expect(Object.keys(schemaOf('UserAccount').properties)).toEqual(USER_ACCOUNT_FIELDS);
    expect(Object.keys(schemaOf('UserDeleted').properties)).toEqual(USER_DELETED_FIELDS);
  });
});
