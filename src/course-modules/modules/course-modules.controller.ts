import { ApiIfMatch, ApiSingleRead } from '../../openapi/openapi.js';
import { currentETag, IfMatch, Preconditions } from '../../core/preconditions.js';
import { Body, Controller, Delete, Get, Post, Put, Query, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { type FastifyReply } from 'fastify';
import {
  AdminOnly,
  type AuthUser,
  CurrentUser,
  FailureMessage,
  ResponseMessage,
  WithMessage,
} from '../../core/decorators.js';
import {
  INTERNAL_ERROR_MESSAGE,
  NOT_A_JSON_OBJECT_MESSAGE,
  PERMISSION_DENIED_MESSAGE,
  UNSUPPORTED_CONTENT_TYPE_MESSAGE,
  UNKNOWN_PROPERTY_MESSAGE,
} from '../../core/errors.js';
import { type JsonText } from '../../core/json-text.js';
import { ApiErrors, ApiOk, ApiPagingQuery, ApiSortQuery } from '../../openapi/openapi.js';
import {
  BulkDeleteResultSchema,
  ModuleListSchema,
  ModuleSchema,
  ModuleWithPersonnelSchema,
  MyModulesSchema,
} from './module.schemas.js';
import { INVALID_SORT_MESSAGE, type Query as QueryParams, PAGING_MESSAGES } from '../../core/query.js';
import { type RequestContext } from '../../audit/audit-actions.js';
import { RequestCtx } from '../../audit/request-context.decorator.js';
import { bulkDeleteMessage, type BulkDeleteResult } from './bulk-delete.js';
import { CourseModulesService, PERSONNEL_FAILURE_MESSAGE } from './course-modules.service.js';
import { BulkDeleteDto } from './dto/bulk-delete.dto.js';
import { ModuleBodyDto, type ModuleInput } from './dto/module-body.dto.js';
import { ModuleBodyPipe } from './dto/module-body.pipe.js';
import {
  INVALID_MY_STATUS_MESSAGE,
  MODULE_SORT_FIELDS,
  MY_MODULE_STATUSES,
  readModuleListParams,
  readMyModulesStatus,
} from './list-params.js';
import { DUPLICATE_MODULE_MESSAGE, MODULE_NOT_FOUND_MESSAGE } from './module.errors.js';
import { type ModuleList, type ModuleWithPersonnel, type MyModules } from './module.mapper.js';
import { type ModuleResponse } from './module.shape.js';
import { ModuleIdParam } from './module-id.param.js';
import {
  CODE_MESSAGE,
  CREDITS_MESSAGE,
  DESCRIPTION_MESSAGE,
  DESCRIPTION_NUL_MESSAGE,
  MODULE_IDS_MESSAGES,
  YEAR_MESSAGE,
} from './module-rules.js';

const NOT_AN_OBJECT = NOT_A_JSON_OBJECT_MESSAGE;
const MODULE_BODY_MESSAGES = [
  CODE_MESSAGE,
  YEAR_MESSAGE,
  DESCRIPTION_MESSAGE,
  DESCRIPTION_NUL_MESSAGE,
  CREDITS_MESSAGE,
  UNKNOWN_PROPERTY_MESSAGE,
  NOT_AN_OBJECT,
];

const textFilter = (name: string, description: string) =>
  ApiQuery({ name, required: false, description, schema: { type: 'string', example: 'csc' } });

@ApiTags('Modules')
@Controller('modules')
export class CourseModulesController {
  constructor(
    private readonly modules: CourseModulesService,
    private readonly preconditions: Preconditions,
  ) {}

  @Get()
  @ResponseMessage('Modules retrieved successfully')
  @FailureMessage(INTERNAL_ERROR_MESSAGE)
  @ApiOperation({
    summary: 'List modules, filtered, sorted and paged',
    description: 'Admins see every module; other users only the modules where they hold a role.',
  })
  @textFilter('query', 'Code or description contains this text (case-insensitive, literal).')
  @textFilter('code', 'Code contains this text (case-insensitive, literal).')
  @ApiQuery({
    name: 'year',
    required: false,
    description: 'Exactly this year.',
    schema: { type: 'integer', format: 'int32', example: 2026 },
  })
  @ApiPagingQuery()
  @ApiSortQuery(Object.keys(MODULE_SORT_FIELDS), 'id')
  @ApiOk(200, 'Modules retrieved successfully', ModuleListSchema)
  @ApiErrors({
    400: [
      ...PAGING_MESSAGES,
      'year must be an integer',
      'query must be given at most once',
      'query must not contain NUL characters',
      INVALID_SORT_MESSAGE,
    ],
  })
  list(@CurrentUser() user: AuthUser, @Query() query: QueryParams): Promise<JsonText<ModuleList>> {
    return this.modules.list(user, readModuleListParams(query));
  }

  @Get('me')
  @ResponseMessage('My module details retrieved successfully')
  @FailureMessage('An error occurred while retrieving module details')
  @ApiOperation({
    summary: "The caller's modules, grouped by role",
    description:
      'Each group is ordered by year descending, then code. Admins too see only their own modules. By default ' +
      'the memberships whose effective status is `active`; `status` asks for the `completed` or `upcoming` ones.',
  })
  @ApiQuery({
    name: 'status',
    required: false,
    description: 'Which memberships to list, by effective status (docs/api.md §15).',
    schema: { type: 'string', enum: [...MY_MODULE_STATUSES], default: 'active' },
  })
  @ApiOk(200, 'My module details retrieved successfully', MyModulesSchema)
  @ApiErrors({ 400: [INVALID_MY_STATUS_MESSAGE, 'status must be given at most once'] })
  mine(@CurrentUser() user: AuthUser, @Query() query: QueryParams): Promise<JsonText<MyModules>> {
    return this.modules.mine(user.id, readMyModulesStatus(query));
  }

  @Get(':module_id')
  @ApiSingleRead()
  @ResponseMessage('Module retrieved successfully')
  @FailureMessage('Database error retrieving module')
  @ApiOperation({
    summary: 'Read a module with its personnel',
    description: 'For admins and anyone holding a role in the module. Each list is ordered by username.',
  })
  @ApiOk(200, 'Module retrieved successfully', ModuleWithPersonnelSchema)
  @ApiErrors({
    403: [PERMISSION_DENIED_MESSAGE],
    404: [MODULE_NOT_FOUND_MESSAGE],
    500: [PERSONNEL_FAILURE_MESSAGE],
  })
  read(@ModuleIdParam() id: string, @CurrentUser() user: AuthUser): Promise<JsonText<ModuleWithPersonnel>> {
    return this.modules.read(id, user);
  }

  @Post()
  @AdminOnly()
  @ResponseMessage('Module created successfully')
  @ApiOperation({ summary: 'Create a module' })
  @ApiBody({ type: ModuleBodyDto })
  @ApiOk(201, 'Module created successfully', ModuleSchema)
  @ApiErrors({ 400: MODULE_BODY_MESSAGES, 409: [DUPLICATE_MODULE_MESSAGE] })
  create(
    @Body(ModuleBodyPipe) body: ModuleInput,
    @RequestCtx() context: RequestContext,
  ): Promise<ModuleResponse> {
    return this.modules.create(body, context);
  }

  @Put(':module_id')
  @ApiIfMatch()
  @AdminOnly()
  @ResponseMessage('Module updated successfully')
  @ApiOperation({
    summary: 'Replace a module',
    description: 'Every field is replaced (an omitted description becomes null); `updated_at` is bumped.',
  })
  @ApiBody({ type: ModuleBodyDto })
  @ApiOk(200, 'Module updated successfully', ModuleSchema)
  @ApiErrors({
    400: MODULE_BODY_MESSAGES,
    404: [MODULE_NOT_FOUND_MESSAGE],
    409: [DUPLICATE_MODULE_MESSAGE],
  })
  async update(
    @ModuleIdParam() id: string,
    @Body(ModuleBodyPipe) body: ModuleInput,
    @RequestCtx() context: RequestContext,
    @CurrentUser() user: AuthUser,
    @IfMatch() ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ModuleResponse> {
    const read = () => this.modules.read(id, user);
    await this.preconditions.check(ifMatch, read);
    const updated = await this.modules.update(id, body, context);
    // The answer is not the single read's body: the new ETag is the single read's, taken again.
    void reply.header('etag', await currentETag(read));
    return updated;
  }

  @Delete('bulk')
  @AdminOnly()
  @ApiOperation({
    summary: 'Delete up to 1000 modules',
    description:
      'Found modules are deleted in one transaction with their roles, assignments and files. Ids with no ' +
      'module, and repeats, are listed in `failed` in request order. The message is `Deleted <deleted>/<requested> modules`.',
  })
  @ApiOk(200, 'Deleted 2/3 modules', BulkDeleteResultSchema, 'Deleted <deleted>/<requested> modules')
  @ApiErrors({
    400: [
      MODULE_IDS_MESSAGES.required,
      MODULE_IDS_MESSAGES.tooMany,
      MODULE_IDS_MESSAGES.invalid,
      UNKNOWN_PROPERTY_MESSAGE,
    ],
  })
  async bulkRemove(
    @Body() body: BulkDeleteDto,
    @RequestCtx() context: RequestContext,
  ): Promise<WithMessage<BulkDeleteResult>> {
    const result = await this.modules.bulkRemove(body.module_ids, context);
    return new WithMessage(result, bulkDeleteMessage(result, body.module_ids.length));
  }

  @Delete(':module_id')
  @ApiIfMatch()
  @AdminOnly()
  @ResponseMessage('Module deleted successfully')
  @ApiOperation({ summary: 'Delete a module with its roles, assignments and files' })
  @ApiOk(200, 'Module deleted successfully', null)
  // The route takes no body, but one sent with a content type other than JSON is refused by the framework.
  @ApiErrors({ 404: [MODULE_NOT_FOUND_MESSAGE], 415: [UNSUPPORTED_CONTENT_TYPE_MESSAGE] })
  async remove(
    @ModuleIdParam() id: string,
    @RequestCtx() context: RequestContext,
    @CurrentUser() user: AuthUser,
    @IfMatch() ifMatch: string | undefined,
  ): Promise<null> {
    await this.preconditions.check(ifMatch, () => this.modules.read(id, user));
    await this.modules.remove(id, context);
    return null;
  }
}
