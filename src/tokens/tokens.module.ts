import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { IntegrationTokenCheck } from './integration-token.check.js';
import { TokensController } from './tokens.controller.js';
import { TokensRepository } from './tokens.repository.js';
import { TokensService } from './tokens.service.js';

/** Integration tokens (docs/api.md §14): the admin routes, and the check the bearer strategy asks. */
@Module({
  imports: [AuditModule],
  controllers: [TokensController],
  providers: [TokensRepository, TokensService, IntegrationTokenCheck],
  exports: [IntegrationTokenCheck],
})
export class TokensModule {}
