import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { csvUploadOnly } from '../csv/csv-upload.js';
import { EventsModule } from '../events/events.module.js';
import { contentTypeOnly } from '../uploads/content-type-only.js';
import { AvatarFiles } from './avatar-files.js';
import { AvatarController } from './avatar.controller.js';
import { AvatarService } from './avatar.service.js';
import { PasswordHasher } from './password-hasher.js';
import { UserAccessCache } from './user-access.cache.js';
import { UserImportService } from './user-import.service.js';
import { User } from './user.entity.js';
import { UsersCsvController } from './users-csv.controller.js';
import { UsersController } from './users.controller.js';
import { UserBulkRepository } from './user-bulk.repository.js';
import { UserListRepository } from './user-list.repository.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

/** Users API and avatars (docs/api.md §5); the users table, password hashing and the per-request access check. */
@Module({
  imports: [TypeOrmModule.forFeature([User]), AuditModule, EventsModule],
  controllers: [UsersCsvController, UsersController, AvatarController],
  providers: [
    UsersService,
    UsersRepository,
    UserListRepository,
    UserBulkRepository,
    AvatarService,
    AvatarFiles,
    PasswordHasher,
    UserAccessCache,
    UserImportService,
  ],
  exports: [UsersService, UsersRepository, UserBulkRepository, PasswordHasher, UserAccessCache, AvatarFiles],
})
export class UsersModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(contentTypeOnly('multipart/form-data'))
      .forRoutes({ path: 'users/:user_id/avatar', method: RequestMethod.PUT });
    consumer.apply(csvUploadOnly).forRoutes({ path: 'users/import', method: RequestMethod.POST });
  }
}
