import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AvatarFiles } from './avatar-files.js';
import { AvatarController } from './avatar.controller.js';
import { AvatarService } from './avatar.service.js';
import { MultipartOnlyMiddleware } from './multipart-only.middleware.js';
import { PasswordHasher } from './password-hasher.js';
import { UserAccessCache } from './user-access.cache.js';
import { User } from './user.entity.js';
import { UsersController } from './users.controller.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

/** Users API and avatars (SPEC §5); the users table, password hashing and the per-request access check. */
@Module({
  imports: [TypeOrmModule.forFeature([User])],
  controllers: [UsersController, AvatarController],
  providers: [UsersService, UsersRepository, AvatarService, AvatarFiles, PasswordHasher, UserAccessCache],
  exports: [UsersService, UsersRepository, PasswordHasher, UserAccessCache],
})
export class UsersModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(MultipartOnlyMiddleware)
      .forRoutes({ path: 'users/:user_id/avatar', method: RequestMethod.PUT });
  }
}
