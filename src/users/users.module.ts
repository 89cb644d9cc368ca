import { Module } from '@nestjs/common';

/** Users API and avatars (SPEC §5). */
@Module({})
export class UsersModule {}
