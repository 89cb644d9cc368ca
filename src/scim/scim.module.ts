import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { EventsModule } from '../events/events.module.js';
import { UsersModule } from '../users/users.module.js';
import { ScimController } from './scim.controller.js';
import { ScimUsersRepository } from './scim-users.repository.js';
import { ScimService } from './scim.service.js';

/** SCIM 2.0 provisioning (docs/provisioning.md); imported only when SCIM_ENABLED=true. */
@Module({
  imports: [UsersModule, AuditModule, EventsModule],
  controllers: [ScimController],
  providers: [ScimService, ScimUsersRepository],
})
export class ScimModule {}
