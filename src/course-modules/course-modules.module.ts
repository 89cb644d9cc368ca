import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { CsvUploadOnlyMiddleware } from '../core/csv/csv-upload.js';
import { CourseModulesController } from './course-modules.controller.js';
import { CourseModulesService } from './course-modules.service.js';
import { ModuleBodyPipe } from './dto/module-body.pipe.js';
import { ModuleFiles } from './module-files.js';
import { PersonnelController, StudentsController } from './personnel.controller.js';
import { PersonnelService } from './personnel.service.js';
import { RosterController } from './roster.controller.js';
import { RosterRepository } from './roster.repository.js';
import { RosterService } from './roster.service.js';

/** Modules API with personnel and students (SPEC §4). Queries are plain SQL on the DataSource. */
@Module({
  imports: [AuditModule],
  controllers: [CourseModulesController, PersonnelController, StudentsController, RosterController],
  providers: [
    CourseModulesService,
    PersonnelService,
    ModuleFiles,
    ModuleBodyPipe,
    RosterService,
    RosterRepository,
  ],
})
export class CourseModulesModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(CsvUploadOnlyMiddleware)
      .forRoutes({ path: 'modules/:module_id/roster/import', method: RequestMethod.POST });
  }
}
