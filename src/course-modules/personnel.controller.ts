import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { type AuthUser, CurrentUser, ResponseMessage } from '../core/decorators.js';
import { type Query as QueryParams } from '../core/query.js';
import { type UserSummary } from '../users/user.mapper.js';
import { PersonnelBodyDto, StudentsBodyDto } from './dto/personnel-body.dto.js';
import { ModuleIdParam } from './module-id.param.js';
import { readUserListParams } from './list-params.js';
import { type PersonnelMember } from './module.mapper.js';
import { ModuleRole, parseModuleRole } from './module-role.js';
import { PersonnelService, type UserPage } from './personnel.service.js';

/** SPEC §4.1: who holds which role in a module. */
@Controller('modules/:module_id/personnel')
export class PersonnelController {
  constructor(private readonly personnel: PersonnelService) {}

  @Get()
  @ResponseMessage('Personnel retrieved successfully')
  list(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Query() query: QueryParams,
  ): Promise<UserPage<PersonnelMember>> {
    return this.personnel.list(id, user, readUserListParams(query, true), 'personnel');
  }

  @Get('eligible')
  @ResponseMessage('Eligible users retrieved successfully')
  eligible(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Query() query: QueryParams,
  ): Promise<UserPage<UserSummary>> {
    return this.personnel.eligible(id, user, readUserListParams(query, false));
  }

  @Post()
  @HttpCode(200)
  @ResponseMessage('Users assigned successfully')
  async assign(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Body() body: PersonnelBodyDto,
  ): Promise<{ assigned: number }> {
    return { assigned: await this.personnel.assign(id, user, body.user_ids, parseModuleRole(body.role)!) };
  }

  @Delete()
  @ResponseMessage('Users removed successfully')
  async remove(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Body() body: PersonnelBodyDto,
  ): Promise<{ removed: number }> {
    return { removed: await this.personnel.remove(id, user, body.user_ids, parseModuleRole(body.role)!) };
  }
}

/** SPEC §4.2: the student roster, for teaching staff; writes behave as personnel with role Student. */
@Controller('modules/:module_id/students')
export class StudentsController {
  constructor(private readonly personnel: PersonnelService) {}

  @Get()
  @ResponseMessage('Students retrieved successfully')
  list(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Query() query: QueryParams,
  ): Promise<UserPage<PersonnelMember>> {
    return this.personnel.list(id, user, readUserListParams(query, false), 'students');
  }

  @Post()
  @HttpCode(200)
  @ResponseMessage('Students enrolled successfully')
  async enrol(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Body() body: StudentsBodyDto,
  ): Promise<{ enrolled: number }> {
    return { enrolled: await this.personnel.assign(id, user, body.user_ids, ModuleRole.Student) };
  }

  @Delete()
  @ResponseMessage('Students removed successfully')
  async remove(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Body() body: StudentsBodyDto,
  ): Promise<{ removed: number }> {
    return { removed: await this.personnel.remove(id, user, body.user_ids, ModuleRole.Student) };
  }
}
