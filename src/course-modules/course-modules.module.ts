import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AnswerBudget } from '../core/answer-budget.js';
import { csvUploadOnly } from '../csv/csv-upload.js';
import { EventsModule } from '../events/events.module.js';
import { UsersModule } from '../users/users.module.js';
import { CourseModule } from './modules/course-module.entity.js';
import { CourseModulesController } from './modules/course-modules.controller.js';
import { CourseModulesRepository } from './modules/course-modules.repository.js';
import { ModuleReadsRepository } from './modules/module-reads.repository.js';
import { CourseModulesService } from './modules/course-modules.service.js';
import { ModuleBodyPipe } from './modules/dto/module-body.pipe.js';
import { RolloverBodyPipe } from './rollover/dto/rollover-body.pipe.js';
import { ModuleFiles } from './modules/module-files.js';
import { MemberListsRepository } from './membership/member-lists.repository.js';
import { ModuleRolesRepository } from './membership/module-roles.repository.js';
import { ModuleTotals } from './modules/module-totals.js';
import { MembershipSweep } from './membership/membership-sweep.js';
import { MembersController } from './personnel/members.controller.js';
import { PersonnelController } from './personnel/personnel.controller.js';
import { PersonnelService } from './personnel/personnel.service.js';
import { CourseModulesController as RolloverController } from './rollover/rollover.controller.js';
import { RolloverService } from './rollover/rollover.service.js';
import { RosterController } from './roster/roster.controller.js';
import { RosterService } from './roster/roster.service.js';
import { StudentsController } from './personnel/students.controller.js';
import { UserModuleRole } from './membership/user-module-role.entity.js';
import { UserModulesController } from './modules/user-modules.controller.js';

/** Modules API with personnel and students (docs/api.md §4), and each user's modules. */
@Module({
  imports: [TypeOrmModule.forFeature([CourseModule, UserModuleRole]), UsersModule, AuditModule, EventsModule],
  controllers: [
    CourseModulesController,
    RolloverController,
    PersonnelController,
    MembersController,
    StudentsController,
    UserModulesController,
    RosterController,
  ],
  providers: [
    {
      provide: AnswerBudget,
      useFactory: (config: AppConfig) => new AnswerBudget(config.largeAnswerBudgetBytes),
      inject: [APP_CONFIG],
    },
    CourseModulesService,
    PersonnelService,
    CourseModulesRepository,
    ModuleReadsRepository,
    ModuleRolesRepository,
    MemberListsRepository,
    ModuleFiles,
    ModuleBodyPipe,
    ModuleTotals,
    RosterService,
    MembershipSweep,
    RolloverService,
    RolloverBodyPipe,
  ],
  exports: [MembershipSweep, ModuleFiles],
})
export class CourseModulesModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(csvUploadOnly)
      .forRoutes({ path: 'modules/:module_id/roster/import', method: RequestMethod.POST });
  }
}
