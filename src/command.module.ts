import { type DynamicModule, type INestApplicationContext, type LoggerService, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from './audit/audit.module.js';
import { type AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { Clock } from './core/clock.js';
import { DrainingModule } from './core/draining.js';
import { DatabaseModule } from './database/database.module.js';
import { EventsModule } from './events/events.module.js';
import { MetricsModule } from './observability/metrics.js';
import { createFileStore, FILE_STORE, StorageService } from './storage/storage.service.js';
import { PasswordHasher } from './users/password-hasher.js';
import { UserAccessCache } from './users/user-access.cache.js';
import { User } from './users/user.entity.js';
import { UserBulkRepository } from './users/user-bulk.repository.js';
import { UserListRepository } from './users/user-list.repository.js';
import { UsersRepository } from './users/users.repository.js';
import { UsersService } from './users/users.service.js';

/**
 * What the commands (`npm run cli`, `npm run seed:demo`) run: the users writer (UsersService with its
 * repository), the audit trail and the change events. Not the application module: nothing that works at start
 * runs here (the first administrator, the metrics listener, and none of the background work: the file sweeps,
 * the webhook workers, the prunes, which are the WorkersModule's), and no HTTP routes.
 */
@Module({})
class CommandModule {
  static forRoot(config: AppConfig & { databaseUrl: string }): DynamicModule {
    return {
      module: CommandModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(config),
        TypeOrmModule.forFeature([User]),
        DrainingModule,
        MetricsModule,
        AuditModule,
        EventsModule,
      ],
      providers: [
        UsersService,
        UsersRepository,
        UserListRepository,
        UserBulkRepository,
        PasswordHasher,
        UserAccessCache,
        Clock,
        // UsersService removes avatars of deleted users; creating one never touches the store.
        { provide: FILE_STORE, useFactory: () => createFileStore(config) },
        StorageService,
      ],
    };
  }
}

/**
 * The settings a command runs the services with: the service's own, on `databaseUrl`, with one pooled
 * connection and no metrics listener. `long`: every statement gets the bounds of long-running work (DB_LONG_*),
 * as the demo generator needs.
 */
export function commandConfig(
  config: AppConfig,
  databaseUrl: string,
  timeouts: 'interactive' | 'long' = 'interactive',
): AppConfig & { databaseUrl: string } {
  return {
    ...config,
    databaseUrl,
    dbPoolSize: 1,
    metricsPort: undefined,
    ...(timeouts === 'long'
      ? {
          dbStatementTimeoutMs: config.dbLongStatementTimeoutMs,
          dbQueryTimeoutMs: config.dbLongQueryTimeoutMs,
        }
      : {}),
  };
}

/** Nest's own messages stay quiet; warnings and errors go to stderr, so stdout holds the command's answer. */
const stderrLogger: LoggerService = {
  log: () => undefined,
  warn: (message: unknown) => process.stderr.write(`${String(message)}\n`),
  error: (message: unknown) => process.stderr.write(`${String(message)}\n`),
};

/** The users writer and its neighbours on `config` (see {@link commandConfig}); close it when done. */
export function openCommandContext(
  config: AppConfig & { databaseUrl: string },
): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(CommandModule.forRoot(config), {
    logger: stderrLogger,
    abortOnError: false,
  });
}
