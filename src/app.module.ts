import { type DynamicModule, Module } from '@nestjs/common';
import { AuditModule } from './audit/audit.module.js';
import { AuthModule } from './auth/auth.module.js';
import { type AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { CoreModule } from './core/core.module.js';
import { DrainingModule } from './core/draining.js';
import { EventsModule } from './events/events.module.js';
import { ExportsModule } from './exports/exports.module.js';
import { DatabaseModule } from './database/database.module.js';
import { CourseModulesModule } from './course-modules/course-modules.module.js';
import { IdempotencyModule } from './idempotency/idempotency.module.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './observability/metrics.js';
import { RedisModule } from './redis/redis.module.js';
import { StorageModule } from './storage/storage.module.js';
import { TokensModule } from './tokens/tokens.module.js';
import { ScimModule } from './scim/scim.module.js';
import { UsersModule } from './users/users.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';
import { WorkersModule } from './workers/workers.module.js';

/** A config whose database and JWT secret have been settled at boot. */
export type ResolvedConfig = AppConfig & { databaseUrl: string; jwtSecret: string };

@Module({})
export class AppModule {
  static forRoot(config: ResolvedConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(config),
        // Before CoreModule: its interceptor wraps the envelope's (idempotency.module.ts).
        IdempotencyModule,
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
        TokensModule,
        ExportsModule,
        // Off by default: every /api/scim/v2 path is then an unknown route (404 in the envelope).
        ...(config.scimEnabled ? [ScimModule] : []),
        // The background work (timers and loops, src/workers/): always in the service, in a test only when it asks.
        ...(config.backgroundWorkers ? [WorkersModule] : []),
      ],
    };
  }
}
