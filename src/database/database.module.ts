import { type DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { type AppConfig } from '../config/app-config.js';
import { requestPoolOptions } from './database.js';
import { Transactions } from './transactions.js';

/**
 * The database every module shares, provided once: TypeORM's `DataSource` (the request pool, with the interactive
 * bounds) and {@link Transactions}. Global, so features inject `Transactions` without importing this module; the
 * application module (and the command line's) imports it once.
 */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(config: AppConfig & { databaseUrl: string }): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          ...requestPoolOptions(config),
          // Fail fast if the server is gone.
          retryAttempts: 3,
          retryDelay: 1000,
        }),
      ],
      providers: [Transactions],
      exports: [Transactions],
    };
  }
}
