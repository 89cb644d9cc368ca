import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions } from '../ormconfig.js';
import { AuditModule } from './audit/audit.module.js';
import { AuthModule } from './auth/auth.module.js';
import { type AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { CoreModule } from './core/core.module.js';
import { DrainingModule } from './core/draining.js';
import { EventsModule } from './events/events.module.js';
import { interactiveTimeouts } from './database/database.js';
import { CourseModulesModule } from './course-modules/course-modules.module.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './observability/metrics.js';
import { RedisModule } from './redis/redis.module.js';
import { StorageModule } from './storage/storage.module.js';
import { UsersModule } from './users/users.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

/** A config whose database and JWT secret have been settled at boot. */
export type ResolvedConfig = AppConfig & { databaseUrl: string; jwtSecret: string };

@Module({})
export class AppModule {
  static forRoot(config: ResolvedConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        TypeOrmModule.forRoot({
          ...dataSourceOptions(config.databaseUrl, config.dbPoolSize, interactiveTimeouts(config)),
          // Migrations ran before the module was built (see runMigrations); fail fast if the server is gone.
          migrationsRun: false,
          retryAttempts: 3,
          retryDelay: 1000,
        }),
        CoreModule,
        DrainingModule,
        MetricsModule,
        RedisModule,
        StorageModule,
        AuthModule,
        HealthModule,
        UsersModule,
        CourseModulesModule,
        AuditModule,
        WebhooksModule,
        EventsModule,
      ],
    };
  }
}
