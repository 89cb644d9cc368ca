import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { AvatarFiles } from './avatar-files.js';
import { AvatarController } from './avatar.controller.js';
import { AvatarService } from './avatar.service.js';
import { MultipartOnlyMiddleware } from './multipart-only.middleware.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

/** Users API and avatars (SPEC §5). */
@Module({
  imports: [AuthModule],
  controllers: [UsersController, AvatarController],
  providers: [UsersService, AvatarService, AvatarFiles],
})
export class UsersModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(MultipartOnlyMiddleware)
      .forRoutes({ path: 'users/:user_id/avatar', method: RequestMethod.PUT });
  }
}
