import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { type RequestContext } from '../../audit/audit-actions.js';
import { RequestCtx } from '../../audit/request-context.decorator.js';
import { type AuthUser, CurrentUser } from '../../core/decorators.js';
import { type Query as QueryParams } from '../../core/query.js';
import { StudentsBodyDto, StudentsEnrolBodyDto } from './dto/personnel-body.dto.js';
import { membershipChangeOf } from '../membership/dto/membership-fields.js';
import { readUserListParams } from '../membership/member-list-params.js';
import { type PersonnelMember } from '../membership/membership.shape.js';
import { EnrolledCountSchema, RemovedCountSchema } from './personnel.schemas.js';
import { PersonnelListSchema } from '../membership/membership.schemas.js';
import { ModuleIdParam } from '../modules/module-id.param.js';
import { ModuleRole } from '../modules/module-role.js';
import { ApiModuleUserList, ApiRoleWrite } from './module-user-routes.js';
import { PersonnelService, type UserPage } from './personnel.service.js';

/** docs/api.md §4.2: the student roster, for teaching staff; writes behave as personnel with role Student. */
@ApiTags('Students')
@Controller('modules/:module_id/students')
export class StudentsController {
  constructor(private readonly personnel: PersonnelService) {}

  @Get()
  @ApiModuleUserList(
    'Students retrieved successfully',
    {
      summary: "List a module's students",
      description: 'For admins and the teaching staff (Lecturer, AssistantLecturer, Tutor) of the module.',
    },
    PersonnelListSchema,
    false,
    true,
  )
  list(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Query() query: QueryParams,
  ): Promise<UserPage<PersonnelMember>> {
    return this.personnel.list(id, user, readUserListParams(query, false, true), 'students');
  }

  @Post()
  @HttpCode(200)
  @ApiRoleWrite(
    'Students enrolled successfully',
    {
      summary: 'Enrol users as students of a module',
      description:
        'As personnel assignment with role Student: admins and Lecturers of the module; all or nothing. ' +
        '`status`, `starts_at` and `ends_at` set the membership of every named user (docs/api.md §15).',
    },
    EnrolledCountSchema,
    { withRole: false, removal: false, membership: true },
  )
  async enrol(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Body() body: StudentsEnrolBodyDto,
    @RequestCtx() context: RequestContext,
  ): Promise<{ enrolled: number }> {
    const audit = { action: 'students.enrol', context } as const;
    const membership = membershipChangeOf(body);
    return {
      enrolled: await this.personnel.assign(id, user, body.user_ids, ModuleRole.Student, audit, membership),
    };
  }

  @Delete()
  @ApiRoleWrite(
    'Students removed successfully',
    {
      summary: 'Remove students from a module',
      description: 'Every user must be a student of the module, else nothing changes (409).',
    },
    RemovedCountSchema,
    { withRole: false, removal: true },
  )
  async remove(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Body() body: StudentsBodyDto,
    @RequestCtx() context: RequestContext,
  ): Promise<{ removed: number }> {
    const audit = { action: 'students.remove', context } as const;
    return { removed: await this.personnel.remove(id, user, body.user_ids, ModuleRole.Student, audit) };
  }
}
