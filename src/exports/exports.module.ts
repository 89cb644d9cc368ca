import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ExportsController } from './exports.controller.js';
import { ExportsRepository } from './exports.repository.js';
import { ExportsService } from './exports.service.js';

/** The LMS roster exports (docs/api.md §16, docs/lms-exports.md). */
@Module({
  imports: [AuditModule],
  controllers: [ExportsController],
  providers: [ExportsRepository, ExportsService],
})
export class ExportsModule {}
