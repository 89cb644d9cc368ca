import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { CsvUploadOnlyMiddleware } from '../core/csv/csv-upload.js';
import { AvatarFiles } from './avatar-files.js';
import { AvatarController } from './avatar.controller.js';
import { AvatarService } from './avatar.service.js';
import { MultipartOnlyMiddleware } from './multipart-only.middleware.js';
import { UserImportRepository } from './user-import.repository.js';
import { UserImportService } from './user-import.service.js';
import { UsersCsvController } from './users-csv.controller.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

/** Users API and avatars (SPEC §5). */
@Module({
  imports: [AuthModule, AuditModule],
  controllers: [UsersCsvController, UsersController, AvatarController],
  providers: [UsersService, AvatarService, AvatarFiles, UserImportService, UserImportRepository],
})
export class UsersModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(MultipartOnlyMiddleware)
      .forRoutes({ path: 'users/:user_id/avatar', method: RequestMethod.PUT });
    consumer.apply(CsvUploadOnlyMiddleware).forRoutes({ path: 'users/import', method: RequestMethod.POST });
  }
}
