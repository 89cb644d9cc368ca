import { randomBytes } from 'node:crypto';
import { type Provider, type Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type AppConfig, loadConfig } from '../../src/config/app-config.js';
import { ConfigModule } from '../../src/config/config.module.js';
import { DatabaseModule } from '../../src/database/database.module.js';
import { Draining } from '../../src/core/draining.js';
import { runMigrations } from '../../src/database/database.js';
import { ChangeEventNotifications } from '../../src/events/change-event-notifications.js';
import { ChangeEventsRepository } from '../../src/events/change-events.repository.js';
import { ChangeFeedRepository } from '../../src/events/change-feed.repository.js';
import { ChangeEventsService } from '../../src/events/change-events.service.js';
import { Metrics } from '../../src/observability/metrics.js';
import { createRootLogger, NestPinoLogger } from '../../src/observability/logger.js';
import { emptyWrittenTables, type RunDatabase, scratchDatabase, TEST_JWT_SECRET } from './app.js';

/** ChangeEventsService and what it injects beyond the database, for a test whose classes record change events. */
export const CHANGE_EVENTS_PROVIDERS: Provider[] = [
  ChangeEventsRepository,
  ChangeFeedRepository,
  ChangeEventNotifications,
  ChangeEventsService,
  Draining,
  Metrics,
];

/** What an integration test compiles: the classes it calls, and what they inject beyond the database. */
export interface IntegrationSetup {
  /** The providers the test calls and those they inject (repositories, services); nothing else is built. */
  providers: Provider[];
  /** The entities whose TypeORM repositories those providers inject (`@InjectRepository`). */
  entities?: Parameters<typeof TypeOrmModule.forFeature>[0];
  /**
   * Settings that differ from the tests' defaults (`loadConfig({})`); not the database, which is the module's own,
   * nor `backgroundWorkers`, which is false: the testing module never holds the WorkersModule.
   */
  config?: Partial<Omit<AppConfig, 'databaseUrl' | 'backgroundWorkers'>>;
}

/** A compiled testing module on a migrated database of its own; no HTTP server, no port. */
export interface IntegrationModule {
  /** The provider of `type` from the testing module. */
  get<T>(type: Type<T>): T;
  /** The module's data source (the service's request pool, with its interactive bounds). */
  dataSource: DataSource;
  config: AppConfig & { databaseUrl: string };
  database: RunDatabase;
  /** Deletes the rows tests write (users, modules and their dependents, audit and change events, keys); call in `beforeEach`. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Compiles a NestJS testing module (`Test.createTestingModule`) with the service's ConfigModule and
 * DatabaseModule and only the providers `setup` names, on a scratch database (test/support/app.ts) that it
 * migrates first. The background work (the workers, the dispatcher's loop, the sweeps, the daily prunes) lives in
 * the WorkersModule (src/workers/), which it never imports, so none of it exists here; `config.backgroundWorkers`
 * is false as well. The module is compiled, never initialised: no `onModuleInit` or `onApplicationBootstrap` hook
 * runs either. A test calls the classes' one-pass methods itself.
 * `close()` runs the shutdown hooks, which close the data source. The scratch database is dropped with the run's.
 */
export async function compileIntegrationModule(setup: IntegrationSetup): Promise<IntegrationModule> {
  // A prefix of its own per module: scratchDatabase() counts per test file (Jest gives each file fresh modules),
  // so two files run in one worker process would otherwise ask for the same name.
  const database = await scratchDatabase(`mas_int_${randomBytes(4).toString('hex')}`);
  await runMigrations(database.url);
  const config: AppConfig & { databaseUrl: string } = {
    ...loadConfig({}),
    jwtSecret: TEST_JWT_SECRET,
    logLevel: (process.env.TEST_LOG_LEVEL as AppConfig['logLevel'] | undefined) ?? 'silent',
    ...setup.config,
    backgroundWorkers: false,
    databaseUrl: database.url,
  };
  const testing: TestingModule = await Test.createTestingModule({
    imports: [
      ConfigModule.forRoot(config),
      DatabaseModule.forRoot(config),
      ...(setup.entities ? [TypeOrmModule.forFeature(setup.entities)] : []),
    ],
    providers: setup.providers,
  })
    .setLogger(new NestPinoLogger(createRootLogger(config.logLevel)))
    .compile();
  const dataSource = testing.get<DataSource>(getDataSourceToken());
  return {
    get: (type) => testing.get(type),
    dataSource,
    config,
    database,
    reset: () => emptyWrittenTables(dataSource),
    close: () => testing.close(),
  };
}

/**
 * One testing module for the enclosing `describe` (compiled in `beforeAll`, closed in `afterAll`); the handle
 * may be captured at once and resolves to the compiled module from the first hook on.
 */
export function useIntegrationModule(setup: IntegrationSetup): IntegrationModule {
  let compiled: IntegrationModule | undefined;
  const current = (): IntegrationModule => {
    if (!compiled) throw new Error('the testing module is used before its beforeAll hook ran');
    return compiled;
  };
  beforeAll(async () => {
    compiled = await compileIntegrationModule(setup);
  });
  afterAll(() => compiled?.close());
  return {
    get: (type) => current().get(type),
    get dataSource() {
      return current().dataSource;
    },
    get config() {
      return current().config;
    },
    get database() {
      return current().database;
    },
    reset: () => current().reset(),
    close: () => current().close(),
  };
}
