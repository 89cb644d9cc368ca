import { Controller, Get, HttpCode, Post, Query, Req, Res, type StreamableFile } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { type RequestContext } from '../audit/audit-actions.js';
import { RequestCtx } from '../audit/request-context.decorator.js';
import { ApiDryRunQuery, CsvUpload, readCsvUpload, readDryRun } from '../csv/csv-upload.js';
import { ApiCsvDownload } from '../csv/csv-writer.js';
import { ApiImportHasErrors, CSV_IMPORT_MESSAGES } from '../csv/csv.errors.js';
import { AdminOnly, ResponseMessage, WithMessage } from '../core/decorators.js';
import { ApiErrors, ApiOk, errorResponse, schema } from '../openapi/openapi.js';
import { INVALID_SORT_MESSAGE, type Query as QueryParams, QueryReader } from '../core/query.js';
import { readUserExportParams } from './user-list-filter.js';
import { USER_IMPORT_OPTIONAL, USER_IMPORT_REQUIRED, type UserImportResult } from './user-import.js';
import { USER_EXPORT_COLUMNS, UserImportService } from './user-import.service.js';
import { EMAIL_MESSAGE } from './user-rules.js';

const UserImportRowSchema = schema('UserImportRow', {
  type: 'object',
  required: ['line', 'action', 'username', 'id'],
  additionalProperties: false,
  properties: {
    line: { type: 'integer', minimum: 2, example: 2 },
    action: { type: 'string', enum: ['create', 'update', 'unchanged', 'error'], example: 'create' },
    username: { type: 'string', example: 'jsmith' },
    id: { type: 'integer', format: 'int64', nullable: true, example: 42 },
    errors: { type: 'array', items: { type: 'string' }, example: [EMAIL_MESSAGE] },
    password: {
      type: 'string',
      description:
        'The generated password of a created row that had none; shown once, never stored in clear.',
      example: 'q9yJ1c2n8Vw0bY5tX3r7Zk4eLm6aHs2d',
    },
  },
});
const UserImportResultSchema = schema('UserImportResult', {
  type: 'object',
  required: ['rows', 'created', 'updated', 'unchanged', 'errors', 'dry_run'],
  additionalProperties: false,
  properties: {
    rows: { type: 'array', items: UserImportRowSchema },
    created: { type: 'integer', example: 1 },
    updated: { type: 'integer', example: 0 },
    unchanged: { type: 'integer', example: 0 },
    errors: { type: 'integer', example: 0 },
    dry_run: { type: 'boolean', example: false },
  },
});

/** docs/api.md §9: users from and to CSV. */
@ApiTags('Users')
@AdminOnly()
@Controller('users')
export class UsersCsvController {
  constructor(private readonly imports: UserImportService) {}

  @Post('import')
  @HttpCode(201)
  @CsvUpload(
    'username,email,admin,password,given_name,family_name,display_name,external_id,active\r\n' +
      'jsmith,jsmith@example.edu,false,,Jane,Smith,Jane Smith,8f3c2a4e-51b7-4d0e-9a6f-2b1d7c9e0f13,true\r\n',
  )
  @ApiOperation({
    summary: 'Create and update users from a CSV file, all or nothing',
    description:
      'Columns `username`, `email` (required), `admin`, `password`, `given_name`, `family_name`, `display_name`, ' +
      '`external_id`, `active` (an empty cell is null; for `active`, true). A user already stored with that ' +
      'username and email is `update` when the name, external_id or active columns of the file differ (those ' +
      'fields are set; never admin or a password), else `unchanged`, so a second run changes nothing. A created ' +
      'row without a password gets a random one, returned once as `password` on that row. Any row error: 422 ' +
      'with every row, nothing changed.',
  })
  @ApiDryRunQuery()
  @ApiOk(201, 'Users imported', UserImportResultSchema)
  @ApiOk(200, 'Import checked', UserImportResultSchema, 'Import checked (dry run)')
  @ApiImportHasErrors(UserImportResultSchema)
  @ApiErrors({ ...CSV_IMPORT_MESSAGES, 400: [...CSV_IMPORT_MESSAGES[400], 'dry_run must be true or false'] })
  async import(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Query() query: QueryParams,
    @RequestCtx() context: RequestContext,
  ): Promise<WithMessage<UserImportResult>> {
    const reader = new QueryReader(query);
    const dryRun = readDryRun(reader);
    reader.done();
    const rows = await readCsvUpload(request, reply, USER_IMPORT_REQUIRED, USER_IMPORT_OPTIONAL);
    const result = await this.imports.import(rows, dryRun, context);
    if (dryRun) void reply.status(200);
    return new WithMessage(result, dryRun ? 'Import checked' : 'Users imported');
  }

  @Get('export.csv')
  @ResponseMessage('Users exported')
  @ApiOperation({
    summary: 'Every user matching the list filters and sort, as CSV (streamed, no paging)',
    description: `Columns ${USER_EXPORT_COLUMNS.join(', ')}. Cells starting with =, +, -, @, a tab or CR are prefixed with '.`,
  })
  @ApiQuery({ name: 'query', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'username', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'email', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'admin', required: false, schema: { type: 'boolean' } })
  @ApiQuery({ name: 'active', required: false, schema: { type: 'boolean' } })
  @ApiQuery({ name: 'sort', required: false, schema: { type: 'string', example: 'username' } })
  @ApiCsvDownload(
    'id,username,email,admin,created_at,updated_at,given_name,family_name,display_name,external_id,active\r\n' +
      '1,admin,admin@localhost,true,2026-11-21T08:41:00.123Z,2026-11-21T08:41:00.123Z,,,,,true\r\n',
  )
  @ApiResponse({
    status: 400,
    ...errorResponse(['admin must be true or false', 'active must be true or false', INVALID_SORT_MESSAGE]),
  })
  export(@Query() query: QueryParams): Promise<StreamableFile> {
    return this.imports.export(readUserExportParams(query));
  }
}
