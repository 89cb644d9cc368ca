import { Controller, Get, HttpCode, Post, Query, Req, Res, type StreamableFile } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { type RequestContext } from '../../audit/audit-actions.js';
import { RequestCtx } from '../../audit/request-context.decorator.js';
import { ApiDryRunQuery, CsvUpload, readCsvUpload, readDryRun } from '../../csv/csv-upload.js';
import { ApiCsvDownload } from '../../csv/csv-writer.js';
import { ApiImportHasErrors, CSV_IMPORT_MESSAGES } from '../../csv/csv.errors.js';
import { type AuthUser, CurrentUser, WithMessage } from '../../core/decorators.js';
import { PERMISSION_DENIED_MESSAGE } from '../../core/errors.js';
import { ApiErrors, ApiOk, errorResponse, schema } from '../../openapi/openapi.js';
import { RoleSchema } from '../modules/module.schemas.js';
import { INVALID_SORT_MESSAGE, type Query as QueryParams, QueryReader } from '../../core/query.js';
import { readUserListParams } from '../membership/member-list-params.js';
import { MODULE_NOT_FOUND_MESSAGE } from '../modules/module.errors.js';
import { ModuleIdParam } from '../modules/module-id.param.js';
import { INVALID_ROLE_MESSAGE, MODULE_ROLES } from '../modules/module-role.js';
import { EFFECTIVE_STATUSES } from '../modules/effective-status.js';
import { INVALID_LIST_STATUS_MESSAGE } from '../membership/membership-status.js';
import {
  ON_REMOVE_MESSAGE,
  ON_REMOVE_VALUES,
  ROSTER_COLUMNS,
  ROSTER_OPTIONAL_COLUMNS,
  type RosterImportResult,
  type RosterMode,
  type RosterOptionalColumn,
} from './roster-import.js';
import { ROSTER_EXPORT_COLUMNS, type RosterImportOptions, RosterService } from './roster.service.js';

const RosterImportRowSchema = schema('RosterImportRow', {
  type: 'object',
  required: ['line', 'action', 'user', 'user_id', 'role'],
  additionalProperties: false,
  properties: {
    line: { type: 'integer', minimum: 2, example: 2 },
    action: { type: 'string', enum: ['assign', 'change', 'unchanged', 'error'], example: 'assign' },
    user: { type: 'string', description: 'The username or email as sent.', example: 'jsmith' },
    user_id: { type: 'integer', format: 'int64', nullable: true, example: 42 },
    role: { type: 'string', description: 'Canonical when valid, else as sent.', example: 'Student' },
    errors: { type: 'array', items: { type: 'string' }, example: ['Unknown user: nobody@example.edu'] },
  },
});
const RosterImportResultSchema = schema('RosterImportResult', {
  type: 'object',
  required: ['rows', 'assigned', 'changed', 'unchanged', 'removed', 'errors', 'exceeds_limit', 'dry_run'],
  additionalProperties: false,
  properties: {
    rows: { type: 'array', items: RosterImportRowSchema },
    assigned: { type: 'integer', example: 1 },
    changed: { type: 'integer', example: 0 },
    unchanged: { type: 'integer', example: 0 },
    removed: {
      type: 'array',
      items: {
        type: 'object',
        required: ['user_id', 'username', 'role'],
        additionalProperties: false,
        properties: {
          user_id: { type: 'integer', format: 'int64', example: 7 },
          username: { type: 'string', example: 'old.student' },
          role: RoleSchema,
        },
      },
    },
    errors: { type: 'integer', example: 0 },
    exceeds_limit: { type: 'boolean', example: false },
    dry_run: { type: 'boolean', example: false },
  },
});

const MODE_MESSAGE = 'mode must be add or sync';
const MAX_REMOVALS_MESSAGE = 'max_removals must be an integer of at least 0';

function readImportOptions(query: QueryParams): RosterImportOptions {
  const reader = new QueryReader(query);
  const rawMode = reader.string('mode');
  const mode: RosterMode | undefined =
    rawMode === undefined || rawMode === 'add' ? 'add' : rawMode === 'sync' ? 'sync' : undefined;
  if (mode === undefined) reader.invalid(MODE_MESSAGE);
  const rawMax = query.max_removals;
  const maxRemovals = reader.int('max_removals');
  if (rawMax !== undefined && maxRemovals !== undefined && maxRemovals < 0)
    reader.invalid(MAX_REMOVALS_MESSAGE);
  const rawOnRemove = reader.string('on_remove');
  const onRemove =
    rawOnRemove === undefined ? 'delete' : ON_REMOVE_VALUES.find((value) => value === rawOnRemove);
  if (onRemove === undefined) reader.invalid(ON_REMOVE_MESSAGE);
  const dryRun = readDryRun(reader);
  reader.done();
  return { mode: mode!, onRemove: onRemove!, maxRemovals, dryRun };
}

/** docs/api.md §9: a module's roster from and to CSV. */
@ApiTags('Personnel')
@Controller('modules/:module_id')
export class RosterController {
  constructor(private readonly roster: RosterService) {}

  @Post('roster/import')
  @HttpCode(200)
  @CsvUpload('user,role\r\njsmith,Student\r\nbkhan@example.edu,assistant_lecturer\r\n')
  @ApiOperation({
    summary: "Set a module's roster from a CSV file, all or nothing",
    description:
      'Columns `user` (username or email) and `role`, optionally `status`, `starts_at`, `ends_at` (docs/api.md ' +
      '§15). `mode=add` only adds or changes memberships; `mode=sync` also ' +
      'removes members not in the file whom the caller may remove, refused (409) above `max_removals`. Access as ' +
      'personnel changes: admins, and Lecturers of the module for roles other than Lecturer.',
  })
  @ApiQuery({
    name: 'mode',
    required: false,
    schema: { type: 'string', enum: ['add', 'sync'], default: 'add' },
  })
  @ApiQuery({
    name: 'on_remove',
    required: false,
    description:
      'What `sync` does to a member missing from the file: `delete` the membership, or end it as `completed` ' +
      '(`complete`) or `inactive` (`inactivate`), keeping the record (docs/api.md §15).',
    schema: { type: 'string', enum: [...ON_REMOVE_VALUES], default: 'delete' },
  })
  @ApiQuery({
    name: 'max_removals',
    required: false,
    description:
      'The most members `sync` may remove; default 10 % of those the caller may remove, rounded down.',
    schema: { type: 'integer', format: 'int32', minimum: 0, example: 5 },
  })
  @ApiDryRunQuery()
  @ApiOk(200, 'Roster imported', RosterImportResultSchema)
  @ApiImportHasErrors(RosterImportResultSchema)
  @ApiErrors({
    ...CSV_IMPORT_MESSAGES,
    400: [
      ...CSV_IMPORT_MESSAGES[400],
      MODE_MESSAGE,
      'max_removals must be an integer',
      MAX_REMOVALS_MESSAGE,
      ON_REMOVE_MESSAGE,
      'dry_run must be true or false',
    ],
    403: [PERMISSION_DENIED_MESSAGE],
    404: [MODULE_NOT_FOUND_MESSAGE],
    409: ['Sync would remove <n> members; the limit is <max>'],
  })
  async import(
    @ModuleIdParam() id: string,
    @CurrentUser() caller: AuthUser,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Query() query: QueryParams,
    @RequestCtx() context: RequestContext,
  ): Promise<WithMessage<RosterImportResult>> {
    const options = readImportOptions(query);
    await this.roster.assertMayImport(id, caller);
    const rows = await readCsvUpload(request, reply, ROSTER_COLUMNS, ROSTER_OPTIONAL_COLUMNS);
    // The membership columns the file has (every row carries the same `absent` set, from the header).
    const absent = rows[0]?.absent;
    const columns = new Set<RosterOptionalColumn>(
      ROSTER_OPTIONAL_COLUMNS.filter((name) => absent !== undefined && !absent.has(name)),
    );
    const result = await this.roster.import(id, caller, rows, columns, options, context);
    return new WithMessage(result, options.dryRun ? 'Roster checked' : 'Roster imported');
  }

  @Get('roster.csv')
  @ApiOperation({
    summary: "A module's members matching the personnel list filters and sort, as CSV (streamed, no paging)",
    description: `Columns ${ROSTER_EXPORT_COLUMNS.join(', ')}. For admins and staff of the module.`,
  })
  @ApiQuery({ name: 'role', required: false, schema: { type: 'string', enum: [...MODULE_ROLES] } })
  @ApiQuery({
    name: 'status',
    required: false,
    description: 'Only memberships with this effective status (docs/api.md §15); `all` by default.',
    schema: { type: 'string', enum: [...EFFECTIVE_STATUSES, 'all'], default: 'all' },
  })
  @ApiQuery({ name: 'query', required: false, schema: { type: 'string', example: 'smith' } })
  @ApiQuery({ name: 'sort', required: false, schema: { type: 'string', example: 'username' } })
  @ApiCsvDownload(
    'user_id,username,email,role,status,starts_at,ends_at,effective_status\r\n' +
      '42,jsmith,jsmith@example.edu,Student,active,2026-09-01T08:00:00.000Z,,active\r\n',
  )
  @ApiResponse({
    status: 400,
    ...errorResponse([INVALID_ROLE_MESSAGE, INVALID_LIST_STATUS_MESSAGE, INVALID_SORT_MESSAGE]),
  })
  @ApiResponse({ status: 403, ...errorResponse([PERMISSION_DENIED_MESSAGE]) })
  @ApiResponse({ status: 404, ...errorResponse([MODULE_NOT_FOUND_MESSAGE]) })
  export(
    @ModuleIdParam() id: string,
    @CurrentUser() caller: AuthUser,
    @Query() query: QueryParams,
  ): Promise<StreamableFile> {
    return this.roster.export(id, caller, readUserListParams(query, true, true));
  }
}
