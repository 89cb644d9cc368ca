import { applyDecorators, Controller, Get, Query, type StreamableFile } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { type RequestContext } from '../audit/audit-actions.js';
import { RequestCtx } from '../audit/request-context.decorator.js';
import { AdminOnly, type AuthUser, CurrentUser, IntegrationTokens, WithMessage } from '../core/decorators.js';
import { type Query as QueryParams } from '../core/query.js';
import { ApiErrors, envelope, schema } from '../openapi/openapi.js';
import {
  includeMessage,
  MAX_DROP_MESSAGE,
  PREVIEW_MESSAGE,
  readExportParams,
  USER_KEY_MESSAGE,
  YEAR_MESSAGE,
} from './export-params.js';
import { nothingToExportMessage, tooManyDroppedMessage } from './export.errors.js';
import { type ExportReport, ExportsService } from './exports.service.js';
import { INCLUDABLE, type Profile } from './lms-files.js';

const PREVIEW_MESSAGE_OK = 'Export checked';

const ExportReportSchema = schema('LmsExportReport', {
  type: 'object',
  required: [
    'profile',
    'year',
    'files',
    'synthesized_names',
    'enrollments',
    'previous_enrollments',
    'drop_percent',
  ],
  additionalProperties: false,
  properties: {
    profile: { type: 'string', enum: ['oneroster-1.1', 'canvas-sis'], example: 'oneroster-1.1' },
    year: { type: 'integer', format: 'int32', example: 2026 },
    files: {
      type: 'object',
      description:
        'Rows per data file the zip holds (the manifest left out); a file without rows is not there.',
      additionalProperties: { type: 'integer', minimum: 1 },
      example: {
        'orgs.csv': 1,
        'academicSessions.csv': 1,
        'courses.csv': 260,
        'classes.csv': 260,
        'users.csv': 731,
        'enrollments.csv': 1243,
      },
    },
    synthesized_names: {
      type: 'integer',
      description: 'Users whose given or family name was made up from display_name or username.',
      example: 12,
    },
    enrollments: { type: 'integer', description: 'The rows of enrollments.csv.', example: 1243 },
    previous_enrollments: {
      type: 'integer',
      nullable: true,
      description:
        'The enrolments of the last export of this profile and year that was not a preview; null: none.',
      example: 1250,
    },
    drop_percent: {
      type: 'integer',
      minimum: 0,
      maximum: 100,
      description: 'floor(100 × (previous − now) / previous); 0 when not fewer or when there is no previous.',
      example: 0,
    },
  },
});

/** The query, answers and failures both exports share, with the profile's own `include` values. */
function LmsExportRoute(
  profile: Profile,
  route: { path: string; summary: string; description: string; files: string },
) {
  const includable = INCLUDABLE[profile].join(',');
  const files = route.files;
  return applyDecorators(
    Get(route.path),
    ApiOperation({ summary: route.summary, description: route.description }),
    ApiQuery({
      name: 'year',
      required: true,
      description: 'The academic year: its modules are the classes, their members the enrolments.',
      schema: { type: 'integer', format: 'int32', example: 2026 },
    }),
    ApiQuery({
      name: 'user_key',
      required: false,
      description:
        '`id`: users are `<prefix>user-<id>`; `external_id`: their `external_id` as it is (every exported user ' +
        'needs one of `[A-Za-z0-9._@-]`, else 422).',
      schema: { type: 'string', enum: ['id', 'external_id'], default: 'id' },
    }),
    ApiQuery({
      name: 'include',
      required: false,
      description: `Effective statuses exported beside \`active\`: a comma-separated subset of ${includable} (default: all).`,
      schema: { type: 'string', example: includable },
    }),
    ApiQuery({
      name: 'preview',
      required: false,
      description:
        '`true`: answer the report (what the zip would hold, the drop against the last export), write nothing.',
      schema: { type: 'boolean', default: false },
    }),
    ApiQuery({
      name: 'max_drop',
      required: false,
      description:
        'Refuse (409) an export whose enrolments fell by more than this percentage since the last export of the ' +
        'same profile and year: a partial file unenrols everyone missing from it.',
      schema: { type: 'integer', minimum: 0, maximum: 100, example: 10 },
    }),
    ApiProduces('application/zip', 'application/json'),
    ApiResponse({
      status: 200,
      description: `The zip (${files}), streamed; with \`preview=true\` the report as JSON (\`${PREVIEW_MESSAGE_OK}\`).`,
      content: {
        'application/zip': { schema: { type: 'string', format: 'binary' } },
        'application/json': { schema: envelope(ExportReportSchema, PREVIEW_MESSAGE_OK) },
      },
    }),
    ApiErrors({
      400: [YEAR_MESSAGE, USER_KEY_MESSAGE, includeMessage(profile), PREVIEW_MESSAGE, MAX_DROP_MESSAGE],
      409: [tooManyDroppedMessage('<n>', '<m>', '<p>')],
      422: [nothingToExportMessage('<year>'), 'Users without a usable external_id: <ids>'],
    }),
  );
}

/** docs/api.md §16 and docs/lms-exports.md: the year's rosters for a learning platform. */
@ApiTags('LMS exports')
@AdminOnly()
@IntegrationTokens({ scope: 'exports' })
@Controller('exports')
export class ExportsController {
  constructor(private readonly exports: ExportsService) {}

  @LmsExportRoute('oneroster-1.1', {
    path: 'oneroster-1.1.zip',
    summary: 'The academic year as OneRoster 1.1 CSV (bulk), for Brightspace and most edtech tools',
    description:
      'manifest.csv, orgs.csv, academicSessions.csv, courses.csv, classes.csv, users.csv, enrollments.csv at ' +
      'the root of a zip; a file without rows is left out and declared `absent`. See docs/lms-exports.md.',
    files: 'manifest, orgs, academicSessions, courses, classes, users, enrollments',
  })
  oneRoster(
    @Query() query: QueryParams,
    @CurrentUser() caller: AuthUser,
    @RequestCtx() context: RequestContext,
  ) {
    return this.run('oneroster-1.1', query, caller, context);
  }

  @LmsExportRoute('canvas-sis', {
    path: 'canvas-sis.zip',
    summary: "The academic year as Canvas SIS Import CSV, for Canvas's SIS Imports API",
    description:
      'users.csv, terms.csv, courses.csv, enrollments.csv at the root of a zip; a file without rows is left ' +
      'out. See docs/lms-exports.md.',
    files: 'users, terms, courses, enrollments',
  })
  canvas(
    @Query() query: QueryParams,
    @CurrentUser() caller: AuthUser,
    @RequestCtx() context: RequestContext,
  ) {
    return this.run('canvas-sis', query, caller, context);
  }

  private async run(
    profile: Profile,
    query: QueryParams,
    caller: AuthUser,
    context: RequestContext,
  ): Promise<StreamableFile | WithMessage<ExportReport>> {
    const answer = await this.exports.export(profile, readExportParams(query, profile), caller, context);
    return 'profile' in answer ? new WithMessage(answer, PREVIEW_MESSAGE_OK) : answer;
  }
}
