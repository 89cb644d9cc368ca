// The example calls of `npm run sql:generate` (generate.js): for every repository class, by method, one call or
// several (`label`led) whose statements docs/sql/ shows, or `{ none: why }` for a method that sends no SQL.
// Arguments are given in order; TX stands for the transaction's manager (the call then runs in a transaction
// that is rolled back). Values are distinct on purpose: each parameter is named by the argument path whose
// value it equals (names.js); `extra` names values the method makes itself.
import { AuditRepository } from '../../dist/src/audit/audit.repository.js';
import { CourseModule } from '../../dist/src/course-modules/modules/course-module.entity.js';
import { CourseModulesRepository } from '../../dist/src/course-modules/modules/course-modules.repository.js';
import { ModuleReadsRepository } from '../../dist/src/course-modules/modules/module-reads.repository.js';
import { MemberListsRepository } from '../../dist/src/course-modules/membership/member-lists.repository.js';
import { ModuleRolesRepository } from '../../dist/src/course-modules/membership/module-roles.repository.js';
import { UserModuleRole } from '../../dist/src/course-modules/membership/user-module-role.entity.js';
import { ChangeEventsRepository } from '../../dist/src/events/change-events.repository.js';
import { ChangeFeedRepository } from '../../dist/src/events/change-feed.repository.js';
import { User } from '../../dist/src/users/user.entity.js';
import { UsersRepository } from '../../dist/src/users/users.repository.js';
import { UserListRepository } from '../../dist/src/users/user-list.repository.js';
import { UserBulkRepository } from '../../dist/src/users/user-bulk.repository.js';
import { WebhooksRepository } from '../../dist/src/webhooks/webhooks.repository.js';
import { WebhookDeliveriesRepository } from '../../dist/src/webhooks/webhook-deliveries.repository.js';
import { TokensRepository } from '../../dist/src/tokens/tokens.repository.js';
import { ScimUsersRepository } from '../../dist/src/scim/scim-users.repository.js';
import { IdempotencyRepository } from '../../dist/src/idempotency/idempotency.repository.js';
import { Buffer } from 'node:buffer';
import { ExportsRepository } from '../../dist/src/exports/exports.repository.js';
import { SNAPSHOT, TX } from './names.js';

/**
 * @typedef {{ label?: string, args: unknown[], extra?: Record<string, unknown> }} Example
 * @typedef {{ none: string }} NoSql
 * @typedef {Record<string, (...args: unknown[]) => Promise<unknown>>} Repository
 */

/** The settings the repositories read (export bounds); the defaults of docs/operations.md. */
const CONFIG = {
  dbLongStatementTimeoutMs: 120_000,
  dbLongQueryTimeoutMs: 125_000,
  exportIdleTimeoutMs: 30_000,
};

/** Values the code takes from elsewhere than its arguments, by name, in every example. */
export const CONSTANTS = {
  DB_LONG_STATEMENT_TIMEOUT_MS: String(CONFIG.dbLongStatementTimeoutMs),
  ADMIN_BOOTSTRAP_LOCK: 7_240_001,
  MEMBERSHIP_SWEEP_LOCK: 7_240_015,
};

/**
 * @param {import('typeorm').DataSource} dataSource
 * @returns {Record<string, Repository>}
 */
export function createRepositories(dataSource) {
  return {
    AuditRepository: new AuditRepository(dataSource),
    CourseModulesRepository: new CourseModulesRepository(dataSource.getRepository(CourseModule)),
    ModuleReadsRepository: new ModuleReadsRepository(dataSource.getRepository(CourseModule)),
    ModuleRolesRepository: new ModuleRolesRepository(dataSource.getRepository(UserModuleRole)),
    MemberListsRepository: new MemberListsRepository(dataSource.getRepository(UserModuleRole), CONFIG),
    ChangeEventsRepository: new ChangeEventsRepository(dataSource),
    ChangeFeedRepository: new ChangeFeedRepository(dataSource),
    UsersRepository: new UsersRepository(dataSource.getRepository(User)),
    UserListRepository: new UserListRepository(dataSource, CONFIG),
    UserBulkRepository: new UserBulkRepository(dataSource.getRepository(User)),
    WebhooksRepository: new WebhooksRepository(dataSource),
    WebhookDeliveriesRepository: new WebhookDeliveriesRepository(dataSource),
    TokensRepository: new TokensRepository(dataSource),
    ExportsRepository: new ExportsRepository(dataSource, CONFIG),
    ScimUsersRepository: new ScimUsersRepository(dataSource),
    IdempotencyRepository: new IdempotencyRepository(dataSource),
  };
}

/** Rows the examples find: three users, two modules of 2025 with a Lecturer and a Student, one webhook. */
export const FIXTURE = `
  INSERT INTO users (id, username, email, password_hash, admin) OVERRIDING SYSTEM VALUE VALUES
    (101, 'ada', 'ada@example.org', 'hash-a', true),
    (102, 'brian', 'brian@example.org', 'hash-b', false),
    (103, 'carla', 'carla@example.org', 'hash-c', false);
  INSERT INTO modules (id, code, year, description, credits) OVERRIDING SYSTEM VALUE VALUES
    (201, 'CS101', 2025, 'Programming', 15),
    (202, 'CS102', 2025, 'Databases', 20);
  INSERT INTO user_module_roles (user_id, module_id, role) VALUES (102, 201, 'Lecturer'), (103, 201, 'Student');
  INSERT INTO webhooks (id, url, types, description, secret) OVERRIDING SYSTEM VALUE VALUES
    (301, 'https://hooks.example.org/a', '{module.created}', 'Example', 'whsec_example');
  INSERT INTO integration_tokens (id, name, scopes, token_hash) OVERRIDING SYSTEM VALUE VALUES
    (401, 'Entra ID', '{scim}', '\\x0101010101010101010101010101010101010101010101010101010101010101');
`;

const PAGING = { page: 3, perPage: 10, offset: 20 };
const AT = new Date('2026-01-02T03:04:05.678Z');
const LATER = new Date('2026-02-03T04:05:06.789Z');
const POSITION = { txid: '1000', id: '42' };
/** An LMS export of 2025: `active` memberships and those `completed`. */
const EXPORT_SCOPE = { year: 2025, statuses: ['active', 'completed'] };

/** @type {Record<string, Record<string, Example | Example[] | NoSql>>} */
export const EXAMPLES = {
  AuditRepository: {
    append: {
      args: [
        {
          actorId: 101,
          action: 'module.create',
          targetType: 'module',
          targetIds: ['201'],
          summary: { code: 'CS101' },
          requestId: 'req-1',
          clientIp: '192.0.2.1',
        },
        TX,
      ],
    },
    page: [
      { label: 'No filter, newest first', args: [{ ascending: false, paging: PAGING }] },
      {
        label: 'Every filter, oldest first',
        args: [
          {
            actorId: '101',
            actions: ['module.create', 'module.update'],
            targetType: 'module',
            targetId: '201',
            from: AT,
            to: LATER,
            ascending: true,
            paging: PAGING,
          },
        ],
      },
    ],
    pruneBefore: { args: [AT] },
  },

  ModuleReadsRepository: {
    page: [
      { label: 'An admin, no filter', args: [{ sort: [], paging: PAGING }] },
      {
        label: 'An admin, every filter, sorted by code',
        args: [
          {
            query: 'data',
            code: 'CS',
            year: 2025,
            sort: [{ column: 'm.code', descending: false }],
            paging: PAGING,
            knownVersion: 7,
          },
        ],
      },
      {
        label: 'An admin, a filter whose total is not known yet',
        args: [{ year: 2025, sort: [], paging: PAGING }],
        extra: { 'filter.knownVersion (-1 when not given)': -1 },
      },
      {
        label: 'Anyone else: their own modules only',
        args: [
          { memberId: 102, query: 'data', sort: [{ column: 'm.year', descending: true }], paging: PAGING },
        ],
      },
    ],
    ofMemberJson: { args: [102, 'active'] },
    ofMember: { args: [102] },
    withCallerRole: { args: ['201', 103] },
    withCallerRoleAndPersonnel: [
      { label: 'A member of the module, lists of up to 1 000 people', args: ['201', 103, false, 1000] },
      {
        label: 'An admin, within the answer budget (no bound on the lists)',
        args: ['201', 1, true],
        extra: { 'no bound (the largest int)': 2_147_483_647 },
      },
    ],
    holdersJson: { args: ['201'] },
  },

  CourseModulesRepository: {
    insert: { args: [{ code: 'CS201', year: 2026, description: 'Compilers', credits: 30 }, TX] },
    lockValues: { args: ['201', TX] },
    replace: { args: ['201', { code: 'CS103', year: 2026, description: null, credits: 30 }, TX] },
    deleteWithDependents: {
      args: [['201', '999'], TX],
      extra: { 'the ids found by statement 1': ['201'] },
    },
    rolloverSources: [
      {
        label: 'Named codes, locked',
        args: [{ fromYear: 2025, codes: ['CS101', 'CS102'] }, 500, { lock: true, manager: TX }],
      },
      {
        label: 'Every code, not locked',
        args: [{ fromYear: 2025 }, 500, { lock: false, manager: TX }],
        extra: { 'filter.codes (null: every code)': null },
      },
    ],
    idsByCode: { args: [['CS101', 'CS999'], 2025, TX] },
    insertCopies: { args: [['201', '202'], 2026, TX] },
    existingIds: { args: [['201', '999']] },
  },

  MemberListsRepository: {
    personnelPage: [
      { label: 'No filter', args: [{ moduleId: '201', sort: [], paging: PAGING }] },
      {
        label: 'One role (the student roster)',
        args: [{ moduleId: '201', role: 'Student', sort: [], paging: PAGING }],
      },
      {
        label: 'One effective status',
        args: [{ moduleId: '201', status: 'completed', sort: [], paging: PAGING }],
      },
      {
        label: 'One role, a text, sorted by email',
        args: [
          {
            moduleId: '201',
            role: 'Student',
            query: 'car',
            sort: [{ column: 'u.email', descending: true }],
            paging: PAGING,
          },
        ],
      },
    ],
    streamPersonnel: { args: [{ moduleId: '201', role: 'Student', query: 'car', sort: [] }] },
    eligiblePage: { args: [{ moduleId: '201', query: 'ad', sort: [], paging: PAGING }] },
  },

  ModuleRolesRepository: {
    callerRole: [
      { label: 'Read', args: ['201', 103, {}] },
      { label: 'Locked', args: ['201', 103, { lock: true, manager: TX }] },
    ],
    lockMembers: { args: ['201', TX] },
    lockHeld: { args: ['201', ['102', '103'], TX] },
    writeMemberships: {
      args: [
        '201',
        [
          { userId: '101', role: 'Tutor', status: 'active', startsAt: AT, endsAt: null },
          { userId: '103', role: 'Student', status: 'completed', startsAt: null, endsAt: LATER },
        ],
        TX,
        true,
      ],
    },
    countLecturers: { args: ['201', [102, 103], TX] },
    remove: { args: ['201', ['103'], 'Student', TX] },
    copyMembers: {
      args: [
        { from: ['201'], to: ['202'] },
        ['Lecturer', 'Student'],
        [{ type: 'module.created', data: { id: 202 } }],
        TX,
      ],
    },
    countMembersToCopy: { args: [{ from: ['201', '202'], to: ['203', null] }, ['Tutor'], TX] },
    conclude: { args: ['201', [103], 'completed', TX] },
    removeMembers: { args: ['201', [103], TX] },
    tryLockSweep: { args: [TX] },
    markPassedWindows: { args: [10_000, TX] },
  },

  ChangeEventsRepository: {
    onCommitted: { none: 'it registers the listener of committed transactions.' },
    afterTransactionCommit: { none: "TypeORM's commit event; it reports the counts a transaction appended." },
    afterTransactionRollback: { none: "TypeORM's rollback event; it forgets what the transaction appended." },
    noteAppended: { none: 'it counts events another statement wrote, for the metric.' },
    append: {
      args: [
        TX,
        [
          { type: 'module.created', data: { id: 201 } },
          { type: 'user.deleted', data: { id: 103 } },
        ],
      ],
    },
    pruneBefore: { args: [AT, 10000, TX] },
  },

  ChangeFeedRepository: {
    readAfter: { args: [POSITION, ['module.created'], 50] },
    readPage: [
      { label: 'From the start, every type', args: [null, null, 50] },
      { label: 'After a position, some types', args: [POSITION, ['module.created'], 50] },
    ],
    readPageJson: [
      { label: 'From the start, every type', args: [null, null, 50] },
      { label: 'After a position, some types', args: [POSITION, ['module.created'], 50] },
    ],
    readShared: { args: [POSITION, ['module.created', 'user.created'], 1000] },
  },

  UsersRepository: {
    lockForUpdate: { args: ['102', TX] },
    clashes: [
      {
        label: 'On create',
        args: [{ username: 'Ada', email: 'ada@example.org', externalId: 'E-101' }, null],
      },
      {
        label: 'On a change of user 102',
        args: [{ username: 'Brian', email: 'brian@example.org', externalId: 'E-102' }, '102'],
      },
    ],
    findById: { args: ['101'] },
    findByUsername: { args: ['Ada'] },
    idByUsername: { args: ['Brian'] },
    ssoCandidateByUsername: { args: ['Brian'] },
    ssoCandidateByExternalId: { args: ['5171a35d-82074e06-8ce2'] },
    idBySsoIdentity: { args: ['https://login.example.edu/realms/university', 'f3a9c2d0-subject'] },
    bindSsoIdentity: { args: [101, 'https://login.example.edu/realms/university', 'f3a9c2d0-subject'] },
    clearSsoBinding: { args: ['101', new Date('2026-01-01T00:00:00Z'), TX] },
    setSsoBinding: {
      args: [
        '102',
        'https://login.example.edu/realms/university',
        'b7e1-subject',
        new Date('2026-01-01T00:00:00Z'),
        TX,
      ],
    },
    insertUnlessTaken: {
      args: [{ username: 'dora', email: 'dora@example.org', passwordHash: null, admin: false }, TX],
    },
    exists: { args: ['102'] },
    any: { args: [] },
    insert: {
      args: [{ username: 'emil', email: 'emil@example.org', passwordHash: 'hash-e', admin: true }, TX],
    },
    update: {
      args: [
        '102',
        {
          username: 'brian2',
          email: 'brian2@example.org',
          admin: true,
          passwordHash: 'hash-b2',
          passwordChangedAt: AT,
          updatedAt: LATER,
        },
        TX,
      ],
    },
    delete: { args: ['103', TX] },
    replaceAvatar: { args: ['102', 'avatars/102-1.png', 'image/png', AT, TX] },
    avatarOf: { args: ['102'] },
    accessRow: { args: [101] },
    insertFirstAdmin: {
      label: 'Users exist already: nothing is inserted',
      args: [{ username: 'root', email: 'root@example.org', passwordHash: 'hash-root' }],
    },
  },

  UserListRepository: {
    page: [
      { label: 'No filter, by username', args: [{ sort: [], paging: PAGING }] },
      {
        label: 'Every filter, by email descending',
        args: [
          {
            query: 'ad',
            username: 'ada',
            email: 'example',
            admin: true,
            active: false,
            sort: [{ column: 'u.email', descending: true }],
            paging: PAGING,
          },
        ],
        extra: { 'the version the total was last counted at (-1: never)': -1 },
      },
    ],
    streamList: {
      args: [{ query: 'ad', admin: false, sort: [{ column: 'lower(u.username)', descending: false }] }],
    },
  },

  UserBulkRepository: {
    insertMany: {
      args: [
        [
          { username: 'finn', email: 'finn@example.org', passwordHash: 'hash-f', admin: false, active: true },
          {
            username: 'gina',
            email: 'gina@example.org',
            passwordHash: null,
            admin: true,
            givenName: 'Gina',
            familyName: 'Ross',
            displayName: 'Gina Ross',
            externalId: 'G-1',
            active: false,
          },
        ],
        TX,
      ],
    },
    storedIdentities: { args: [['Ada', 'Zed'], ['Carla@example.org']] },
    importMatches: {
      args: [['Ada', 'Zed'], ['Carla@example.org'], ['0f8fad5b-d9cb-469f-a165-70867728950e']],
    },
    updatePeopleFields: {
      args: [
        [
          { id: 102, changes: { givenName: 'Brian', familyName: null, displayName: 'Brian B.' } },
          { id: 103, changes: { externalId: 'C-103', active: false } },
        ],
        AT,
        TX,
      ],
      extra: {
        'whether each entry sets given_name, family_name, display_name': [true, false],
        'whether each entry sets external_id, active': [false, true],
      },
    },
    avatarKeys: { args: [['101', '102']] },
    lockExisting: { args: [['101', '102', '999'], TX] },
    lockByNames: { args: [['Ada', 'carla@example.org'], TX] },
    insertGenerated: {
      label: "The demo seed's users: two generated rows, one of them taken",
      args: [
        `SELECT 'demo.' || n, 'demo.' || n || '@demo.example.edu' FROM generate_series(1, 2) n`,
        [],
        'hash-demo',
        TX,
      ],
    },
    setAvatarIfNone: { args: ['101', 'avatars/101/demo', 'image/png'] },
  },

  ScimUsersRepository: {
    page: [
      { label: 'No filter: every user, by id', args: [[], 20, 10] },
      {
        label: 'Every kind of filter term, joined by and',
        args: [
          [
            { attribute: 'userName', value: 'Ada' },
            { attribute: 'email', value: 'ADA@example.org' },
            { attribute: 'externalId', value: 'E-101' },
            { attribute: 'id', value: '101' },
          ],
          0,
          100,
        ],
        extra: {
          "the userName term's value": 'Ada',
          "the email term's value": 'ADA@example.org',
          "the externalId term's value": 'E-101',
          "the id term's value": '101',
        },
      },
      {
        label: 'An id that is no user id (a GUID): matches nobody',
        args: [[{ attribute: 'id', value: 'f3b6' }], 0, 5],
      },
    ],
  },

  IdempotencyRepository: {
    claim: { args: ['user:101', 'create-cs103', Buffer.alloc(32, 3)] },
    held: { args: ['user:102', 'retry-7'] },
    complete: { args: ['user:103', 'import-2026', 201, '{"success":true,"data":null,"message":"Created"}'] },
    release: { args: ['token:401', 'feed-1'] },
    pruneBefore: { args: [AT, 10_000, TX] },
  },

  ExportsRepository: {
    open: { args: [] },
    counts: { args: [SNAPSHOT, EXPORT_SCOPE] },
    unusableExternalIds: { args: [SNAPSHOT, EXPORT_SCOPE, 21] },
    lastEnrollments: { args: [SNAPSHOT, 'oneroster-1.1', 2025] },
    remember: { args: [SNAPSHOT, 'canvas-sis', 2025, 1234] },
    courses: { args: [SNAPSHOT, EXPORT_SCOPE] },
    classes: { args: [SNAPSHOT, EXPORT_SCOPE] },
    // A cursor sends the array as PostgreSQL's array text.
    users: { args: [SNAPSHOT, EXPORT_SCOPE], extra: { 'scope.statuses': '{"active","completed"}' } },
    enrolments: { args: [SNAPSHOT, EXPORT_SCOPE], extra: { 'scope.statuses': '{"active","completed"}' } },
  },

  TokensRepository: {
    insert: {
      args: [
        {
          name: 'LMS feed',
          scopes: ['events'],
          tokenHash: Buffer.alloc(32, 2),
          expiresAt: LATER,
        },
        TX,
      ],
    },
    listActive: { args: [] },
    revoke: { args: ['401', TX] },
    findByHash: { args: [Buffer.alloc(32, 1)] },
    touch: { args: [401] },
  },

  WebhooksRepository: {
    insert: {
      args: [
        {
          url: 'https://hooks.example.org/b',
          types: ['module.created', 'user.created'],
          description: 'Another',
          secret: 'whsec_another',
        },
        TX,
      ],
    },
    findById: { args: ['301'] },
    lockById: { args: ['301', TX] },
    findByIds: { args: [['301', '302']] },
    page: { args: [PAGING] },
    update: [
      {
        label: 'Every field, turned on',
        args: [
          '301',
          {
            url: 'https://hooks.example.org/c',
            types: ['user.deleted'],
            description: 'Changed',
            enabled: true,
          },
          TX,
        ],
      },
      { label: 'Turned off', args: ['301', { enabled: false }, TX] },
    ],
    delete: { args: ['301', TX] },
    enabledSubscriptions: { args: [TX] },
    markDelivered: { args: ['301', TX] },
    markFailed: { args: ['301', 86_400_000, TX] },
    lockDispatchPosition: { args: [TX] },
    skipUnwantedEvents: { args: [500] },
    saveDispatchPosition: { args: [POSITION, TX] },
  },

  WebhookDeliveriesRepository: {
    deliveries: { args: ['301', PAGING] },
    recordDelivered: {
      args: [
        [
          {
            webhook_id: '301',
            event_id: 'MTAwMC40Mg',
            event_type: 'module.created',
            attempt: 1,
            at: AT,
            outcome: 'delivered',
            status_code: 204,
            error: null,
            duration_ms: 12,
            response_excerpt: 'ok',
            next_retry_at: null,
          },
        ],
      ],
    },
    recordAttempt: {
      args: [
        {
          webhook_id: '301',
          event_id: 'MTAwMC40Mg',
          event_type: 'module.created',
          attempt: 2,
          at: AT,
          outcome: 'failed',
          status_code: 503,
          error: 'Service Unavailable',
          duration_ms: 1234,
          response_excerpt: 'busy',
          next_retry_at: LATER,
        },
        TX,
      ],
    },
    pruneDeliveriesBefore: { args: [AT, 10_000, TX] },
    lastAttemptAt: { args: ['301'] },
    underSavepoint: { args: [TX, () => Promise.resolve(true)] },
  },
};
