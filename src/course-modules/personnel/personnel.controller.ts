import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { type RequestContext } from '../../audit/audit-actions.js';
import { RequestCtx } from '../../audit/request-context.decorator.js';
import { type AuthUser, CurrentUser } from '../../core/decorators.js';
import { type Query as QueryParams } from '../../core/query.js';
import { type UserSummary } from '../../users/user.shape.js';
import { UserSummaryListSchema } from '../../users/user.schemas.js';
import { PersonnelAssignBodyDto, PersonnelBodyDto } from './dto/personnel-body.dto.js';
import { membershipChangeOf } from '../membership/dto/membership-fields.js';
import { readUserListParams } from '../membership/member-list-params.js';
import { type PersonnelMember } from '../membership/membership.shape.js';
import { AssignedCountSchema, RemovedCountSchema } from './personnel.schemas.js';
import { PersonnelListSchema } from '../membership/membership.schemas.js';
import { ModuleIdParam } from '../modules/module-id.param.js';
import { parseModuleRole } from '../modules/module-role.js';
import { ApiModuleUserList, ApiRoleWrite } from './module-user-routes.js';
import { PersonnelService, type UserPage } from './personnel.service.js';

/** docs/api.md §4.1: who holds which role in a module. */
@ApiTags('Personnel')
@Controller('modules/:module_id/personnel')
export class PersonnelController {
  constructor(private readonly personnel: PersonnelService) {}

  @Get()
  @ApiModuleUserList(
    'Personnel retrieved successfully',
    {
      summary: "List a module's role holders",
      description: 'For admins and staff (Lecturers, AssistantLecturers) of the module.',
    },
    PersonnelListSchema,
    true,
    true,
  )
  list(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Query() query: QueryParams,
  ): Promise<UserPage<PersonnelMember>> {
    return this.personnel.list(id, user, readUserListParams(query, true, true), 'personnel');
  }

  @Get('eligible')
  @ApiModuleUserList(
    'Eligible users retrieved successfully',
    {
      summary: 'List active users holding no role in a module',
      description: 'For admins and staff of the module. Inactive users are left out.',
    },
    UserSummaryListSchema,
  )
  eligible(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Query() query: QueryParams,
  ): Promise<UserPage<UserSummary>> {
    return this.personnel.eligible(id, user, readUserListParams(query, false));
  }

  @Post()
  @HttpCode(200)
  @ApiRoleWrite(
    'Users assigned successfully',
    {
      summary: 'Give users a role in a module',
      description:
        "Replaces a user's other role in this module. All or nothing. Admins may assign any role; a " +
        "Lecturer of the module any role but Lecturer, and not over an existing Lecturer's role. `status`, " +
        '`starts_at` and `ends_at` set the membership of every named user (docs/api.md §15).',
    },
    AssignedCountSchema,
    { withRole: true, removal: false, membership: true },
  )
  async assign(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Body() body: PersonnelAssignBodyDto,
    @RequestCtx() context: RequestContext,
  ): Promise<{ assigned: number }> {
    const role = parseModuleRole(body.role)!;
    return {
      assigned: await this.personnel.assign(
        id,
        user,
        body.user_ids,
        role,
        { action: 'personnel.assign', context },
        membershipChangeOf(body),
      ),
    };
  }

  @Delete()
  @ApiRoleWrite(
    'Users removed successfully',
    {
      summary: 'Take a role away from users in a module',
      description: 'Every user must hold that role, else nothing changes (409). Same access as assignment.',
    },
    RemovedCountSchema,
    { withRole: true, removal: true },
  )
  async remove(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Body() body: PersonnelBodyDto,
    @RequestCtx() context: RequestContext,
  ): Promise<{ removed: number }> {
    const role = parseModuleRole(body.role)!;
    return {
      removed: await this.personnel.remove(id, user, body.user_ids, role, {
        action: 'personnel.remove',
        context,
      }),
    };
  }
}
