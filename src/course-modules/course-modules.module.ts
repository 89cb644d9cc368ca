import { Module } from '@nestjs/common';
import { CourseModulesController } from './course-modules.controller.js';
import { CourseModulesService } from './course-modules.service.js';
import { ModuleBodyPipe } from './dto/module-body.pipe.js';
import { ModuleFiles } from './module-files.js';
import { ModuleTotals } from './module-totals.js';
import { PersonnelController, StudentsController } from './personnel.controller.js';
import { PersonnelService } from './personnel.service.js';

/** Modules API with personnel and students (SPEC §4). Queries are plain SQL on the DataSource. */
@Module({
  controllers: [CourseModulesController, PersonnelController, StudentsController],
  providers: [CourseModulesService, PersonnelService, ModuleFiles, ModuleBodyPipe, ModuleTotals],
})
export class CourseModulesModule {}
