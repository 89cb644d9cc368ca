import pg from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { boundedClient } from './src/database/bounded-client.js';
import { Assignment } from './src/course-modules/modules/assignment.entity.js';
import { AssignmentFile } from './src/course-modules/modules/assignment-file.entity.js';
import { CourseModule } from './src/course-modules/modules/course-module.entity.js';
import { ModuleStats } from './src/course-modules/modules/module-stats.entity.js';
import { UserModuleRole } from './src/course-modules/membership/user-module-role.entity.js';
import { ModuleMemberCount } from './src/course-modules/membership/module-member-count.entity.js';
import { AuditEvent } from './src/audit/audit-event.entity.js';
import { ChangeEvent, ChangeEventsPruned } from './src/events/change-event.entity.js';
import { AuditEvents1763900000000 } from './src/database/migrations/1763900000000-AuditEvents.js';
import { ChangeEvents1764000000000 } from './src/database/migrations/1764000000000-ChangeEvents.js';
import { InitialSchema1763700000000 } from './src/database/migrations/1763700000000-InitialSchema.js';
import { ModuleSearchIndexes1763710000000 } from './src/database/migrations/1763710000000-ModuleSearchIndexes.js';
import { ModuleCounts1763720000000 } from './src/database/migrations/1763720000000-ModuleCounts.js';
import { Webhooks1764100000000 } from './src/database/migrations/1764100000000-Webhooks.js';
import { PasswordlessUsers1764200000000 } from './src/database/migrations/1764200000000-PasswordlessUsers.js';
import { ModuleStatsAtCommit1764300000000 } from './src/database/migrations/1764300000000-ModuleStatsAtCommit.js';
import { FeedHorizon1764410000000 } from './src/database/migrations/1764410000000-FeedHorizon.js';
import { MembershipLifecycle1764600000000 } from './src/database/migrations/1764600000000-MembershipLifecycle.js';
import { ModuleSearchLower1764700000000 } from './src/database/migrations/1764700000000-ModuleSearchLower.js';
import { SsoBinding1764400000000 } from './src/database/migrations/1764400000000-SsoBinding.js';
import { PeopleFields1764500000000 } from './src/database/migrations/1764500000000-PeopleFields.js';
import { UserStats1764800000000 } from './src/database/migrations/1764800000000-UserStats.js';
import { IntegrationTokens1764510000000 } from './src/database/migrations/1764510000000-IntegrationTokens.js';
import { LmsExports1764820000000 } from './src/database/migrations/1764820000000-LmsExports.js';
import { MemberListsAtScale1764830000000 } from './src/database/migrations/1764830000000-MemberListsAtScale.js';
import { SearchStatistics1764840000000 } from './src/database/migrations/1764840000000-SearchStatistics.js';
import { LmsExport } from './src/exports/lms-export.entity.js';
import { IntegrationToken } from './src/tokens/integration-token.entity.js';
import { IdempotencyKey } from './src/idempotency/idempotency-key.entity.js';
import { IdempotencyKeys1764810000000 } from './src/database/migrations/1764810000000-IdempotencyKeys.js';
import { User } from './src/users/user.entity.js';
import { UserStats } from './src/users/user-stats.entity.js';
import { WebhookDelivery } from './src/webhooks/webhook-delivery.entity.js';
import { WebhookDispatch } from './src/webhooks/webhook-dispatch.entity.js';
import { Webhook } from './src/webhooks/webhook.entity.js';

// COUNT(*) and other int8 results arrive as numbers; ids stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export const entities = [
  User,
  CourseModule,
  UserModuleRole,
  ModuleMemberCount,
  Assignment,
  AssignmentFile,
  ModuleStats,
  UserStats,
  AuditEvent,
  ChangeEvent,
  ChangeEventsPruned,
  Webhook,
  WebhookDelivery,
  WebhookDispatch,
  IntegrationToken,
  IdempotencyKey,
  LmsExport,
];
/** Listed, not globbed: the same list works from `dist/` and under Jest. New migrations are appended here. */
export const migrations = [
  InitialSchema1763700000000,
  ModuleSearchIndexes1763710000000,
  ModuleCounts1763720000000,
  AuditEvents1763900000000,
  ChangeEvents1764000000000,
  Webhooks1764100000000,
  PasswordlessUsers1764200000000,
  ModuleStatsAtCommit1764300000000,
  SsoBinding1764400000000,
  FeedHorizon1764410000000,
  PeopleFields1764500000000,
  IntegrationTokens1764510000000,
  MembershipLifecycle1764600000000,
  ModuleSearchLower1764700000000,
  UserStats1764800000000,
  IdempotencyKeys1764810000000,
  LmsExports1764820000000,
  MemberListsAtScale1764830000000,
  SearchStatistics1764840000000,
];

/**
 * How long the service waits on the database: DB_STATEMENT_TIMEOUT_MS, DB_QUERY_TIMEOUT_MS and
 * DB_CONNECT_TIMEOUT_MS for interactive requests; DB_LONG_STATEMENT_TIMEOUT_MS and DB_LONG_QUERY_TIMEOUT_MS for
 * long-running work (docs/operations.md, "When the database fails").
 */
export interface DatabaseTimeouts {
  /** PostgreSQL's `statement_timeout`: the server cancels a statement that runs longer. */
  statementMs: number;
  /** The client's own bound on one query, for a server that cannot answer at all; above `statementMs`. */
  queryMs: number;
  /** Connecting, and waiting for a free pooled connection. */
  connectMs: number;
}

/** The settings' defaults for interactive requests: a pool wait plus one unanswered query stays under 10 s. */
export const DEFAULT_TIMEOUTS: DatabaseTimeouts = { statementMs: 5000, queryMs: 6000, connectMs: 2500 };

/**
 * The settings' defaults for long-running work (imports, exports, rollover, migrations, the demo generator):
 * one statement may rightly run for a minute or two on a large database.
 */
export const DEFAULT_LONG_TIMEOUTS: DatabaseTimeouts = {
  statementMs: 120_000,
  queryMs: 125_000,
  connectMs: 2500,
};

/** The benchmark's seeding at scales of hundreds (bench/run.js), watched by a person: no bound (0). */
export const BATCH_TIMEOUTS: DatabaseTimeouts = { statementMs: 0, queryMs: 0, connectMs: 5000 };

/** The one description of the database, used by the service and by the migration CLI. */
export function dataSourceOptions(
  url: string,
  poolSize = 10,
  timeouts: DatabaseTimeouts = DEFAULT_TIMEOUTS,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities,
    migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'all',
    synchronize: false,
    poolSize,
    extra: {
      connectionTimeoutMillis: timeouts.connectMs,
      // Keeps a stuck query from holding a connection forever; the request gets the route's 500.
      statement_timeout: timeouts.statementMs,
      // The same when the server cannot answer at all (frozen, unreachable): see bounded-client.ts.
      ...(timeouts.queryMs > 0 ? { Client: boundedClient(timeouts.queryMs) } : {}),
      application_name: 'module-admin-service',
    },
  };
}

/** For the TypeORM CLI (`typeorm migration:run -d dist/ormconfig.js`); needs DATABASE_URL. */
export default new DataSource(
  dataSourceOptions(process.env.DATABASE_URL ?? 'postgres://localhost/unset', 1, DEFAULT_LONG_TIMEOUTS),
);
