import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOperation, type ApiOperationOptions, ApiQuery, ApiTags } from '@nestjs/swagger';
import { type RequestContext } from '../audit/audit-actions.js';
import { RequestCtx } from '../audit/request-context.decorator.js';
import { type AuthUser, CurrentUser, ResponseMessage } from '../core/decorators.js';
import { NOT_A_JSON_OBJECT_MESSAGE, PERMISSION_DENIED_MESSAGE } from '../core/errors.js';
import { ApiErrors, ApiOk, ApiPagingQuery, ApiSortQuery, type Schema } from '../openapi/openapi.js';
import {
  AssignedCountSchema,
  EnrolledCountSchema,
  PersonnelListSchema,
  RemovedCountSchema,
} from './module.schemas.js';
import { UserListSchema } from '../users/user.schemas.js';
import { INVALID_SORT_MESSAGE, type Query as QueryParams } from '../core/query.js';
import { type UserSummary } from '../users/user.mapper.js';
import { PersonnelBodyDto, StudentsBodyDto } from './dto/personnel-body.dto.js';
import { readUserListParams } from './list-params.js';
import { MODULE_NOT_FOUND_MESSAGE, ROLE_NOT_HELD_MESSAGE } from './module.errors.js';
import { type PersonnelMember } from './module.mapper.js';
import { ModuleIdParam } from './module-id.param.js';
import { USER_SORT_FIELDS } from './module-queries.js';
import { INVALID_ROLE_MESSAGE, MODULE_ROLES, ModuleRole, parseModuleRole } from './module-role.js';
import { USER_IDS_MESSAGES } from './module-rules.js';
import { PersonnelService, type UserPage } from './personnel.service.js';

const LIST_MESSAGES = [
  'page must be an integer',
  'per_page must be an integer',
  'query must be given at most once',
  'query must not contain NUL characters',
  INVALID_SORT_MESSAGE,
];
const BODY_MESSAGES = [
  USER_IDS_MESSAGES.required,
  USER_IDS_MESSAGES.tooMany,
  USER_IDS_MESSAGES.invalid,
  'property <name> should not exist',
  NOT_A_JSON_OBJECT_MESSAGE,
];
const UNKNOWN_USER = 'User with ID <id> does not exist';

/** query, sort and paging of the user lists. */
const ApiUserListQuery = () =>
  applyDecorators(
    ApiQuery({
      name: 'query',
      required: false,
      description: 'Username or email contains this text (case-insensitive, literal).',
      schema: { type: 'string', example: 'smith' },
    }),
    ApiPagingQuery(),
    ApiSortQuery(Object.keys(USER_SORT_FIELDS), 'username (case-insensitive)'),
  );

/** A list of a module's users: its message, query parameters (`role` when `withRole`), answer and errors. */
const ApiModuleUserList = (message: string, operation: ApiOperationOptions, data: Schema, withRole = false) =>
  applyDecorators(
    ResponseMessage(message),
    ApiOperation(operation),
    ApiUserListQuery(),
    // After the shared parameters, where the document has always listed `role`.
    ...(withRole
      ? [
          ApiQuery({
            name: 'role',
            required: false,
            description: 'Only this role; also accepted case-insensitively and in snake case.',
            schema: { type: 'string', enum: [...MODULE_ROLES] },
          }),
        ]
      : []),
    ApiOk(200, message, data),
    ApiErrors({
      400: withRole ? [...LIST_MESSAGES, INVALID_ROLE_MESSAGE] : LIST_MESSAGES,
      403: [PERMISSION_DENIED_MESSAGE],
      404: [MODULE_NOT_FOUND_MESSAGE],
    }),
  );

/** A role write (assign or remove): its message, answer and errors; `role` is named in the body when `withRole`. */
const ApiRoleWrite = (
  message: string,
  operation: ApiOperationOptions,
  data: Schema,
  { withRole, removal }: { withRole: boolean; removal: boolean },
) => {
  const failures: Record<number, string[]> = {
    400: withRole ? [...BODY_MESSAGES, INVALID_ROLE_MESSAGE] : BODY_MESSAGES,
    403: [PERMISSION_DENIED_MESSAGE],
    404: [MODULE_NOT_FOUND_MESSAGE, UNKNOWN_USER],
  };
  if (removal) failures[409] = [ROLE_NOT_HELD_MESSAGE];
  return applyDecorators(
    ResponseMessage(message),
    ApiOperation(operation),
    ApiOk(200, message, data),
    ApiErrors(failures),
  );
};

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
  )
  list(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Query() query: QueryParams,
  ): Promise<UserPage<PersonnelMember>> {
    return this.personnel.list(id, user, readUserListParams(query, true), 'personnel');
  }

  @Get('eligible')
  @ApiModuleUserList(
    'Eligible users retrieved successfully',
    { summary: 'List users holding no role in a module', description: 'For admins and staff of the module.' },
    UserListSchema,
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
        "Lecturer of the module any role but Lecturer, and not over an existing Lecturer's role.",
    },
    AssignedCountSchema,
    { withRole: true, removal: false },
  )
  async assign(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Body() body: PersonnelBodyDto,
    @RequestCtx() context: RequestContext,
  ): Promise<{ assigned: number }> {
    const role = parseModuleRole(body.role)!;
    return {
      assigned: await this.personnel.assign(id, user, body.user_ids, role, {
        action: 'personnel.assign',
        context,
      }),
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
  )
  list(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Query() query: QueryParams,
  ): Promise<UserPage<PersonnelMember>> {
    return this.personnel.list(id, user, readUserListParams(query, false), 'students');
  }

  @Post()
  @HttpCode(200)
  @ApiRoleWrite(
    'Students enrolled successfully',
    {
      summary: 'Enrol users as students of a module',
      description:
        'As personnel assignment with role Student: admins and Lecturers of the module; all or nothing.',
    },
    EnrolledCountSchema,
    { withRole: false, removal: false },
  )
  async enrol(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Body() body: StudentsBodyDto,
    @RequestCtx() context: RequestContext,
  ): Promise<{ enrolled: number }> {
    const audit = { action: 'students.enrol', context } as const;
    return { enrolled: await this.personnel.assign(id, user, body.user_ids, ModuleRole.Student, audit) };
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
