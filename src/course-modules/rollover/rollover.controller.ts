import { Body, Controller, HttpCode, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { type FastifyReply } from 'fastify';
import { type RequestContext } from '../../audit/audit-actions.js';
import { RequestCtx } from '../../audit/request-context.decorator.js';
import { AdminOnly, WithMessage } from '../../core/decorators.js';
import { NOT_A_JSON_OBJECT_MESSAGE, UNKNOWN_PROPERTY_MESSAGE } from '../../core/errors.js';
import { type Query as QueryParams, QueryReader } from '../../core/query.js';
import { ApiErrors, ApiOk } from '../../openapi/openapi.js';
import { YEAR_MESSAGE } from '../modules/module-rules.js';
import {
  CODES_EMPTY_MESSAGE,
  CODES_MESSAGE,
  ROLES_MESSAGE,
  RolloverBodyDto,
  type RolloverInput,
} from './dto/rollover-body.dto.js';
import { RolloverBodyPipe } from './dto/rollover-body.pipe.js';
import { type RolloverResult, SAME_YEAR_MESSAGE, TOO_MANY_MODULES_MESSAGE } from './rollover.js';
import { RolloverResultSchema } from './rollover.schemas.js';
import { RolloverService } from './rollover.service.js';

/**
 * `POST /api/modules/rollover` (docs/api.md §13): next year's modules and their staff. Named as the Modules
 * controller is: an operationId is `<controller>.<method>` (src/openapi/setup.ts), and the document's is
 * `CourseModules.rollover`.
 */
@ApiTags('Modules')
@Controller('modules')
export class CourseModulesController {
  constructor(private readonly rollovers: RolloverService) {}

  @Post('rollover')
  @AdminOnly()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Roll modules over into another year with their staff, all or nothing',
    description:
      'For each module of `from_year` (with a code in `codes`, when given): when `(code, to_year)` does not exist ' +
      'it is created with the same description and credits and gets the role rows of `roles` (`create`); when it ' +
      'exists it gets the role rows of `roles` its members lack there, and nothing else changes (`exists`; a member ' +
      'holding another role there keeps it). A code with no module in `from_year` is a `missing` row. One ' +
      'transaction; running it again creates and copies nothing. `dry_run=true` answers 200 `Rollover checked` ' +
      'and changes nothing.',
  })
  @ApiBody({ type: RolloverBodyDto })
  @ApiQuery({
    name: 'dry_run',
    required: false,
    description: 'Check and answer without changing anything (200 `Rollover checked`).',
    schema: { type: 'boolean', default: false },
  })
  @ApiOk(201, 'Modules rolled over', RolloverResultSchema)
  @ApiOk(200, 'Rollover checked', RolloverResultSchema, 'Rollover checked (dry run)')
  @ApiErrors({
    400: [
      YEAR_MESSAGE,
      SAME_YEAR_MESSAGE,
      CODES_MESSAGE,
      CODES_EMPTY_MESSAGE,
      ROLES_MESSAGE,
      'dry_run must be true or false',
      UNKNOWN_PROPERTY_MESSAGE,
      NOT_A_JSON_OBJECT_MESSAGE,
    ],
    413: [TOO_MANY_MODULES_MESSAGE],
  })
  async rollover(
    @Body(RolloverBodyPipe) body: RolloverInput,
    @Query() query: QueryParams,
    @Res({ passthrough: true }) reply: FastifyReply,
    @RequestCtx() context: RequestContext,
  ): Promise<WithMessage<RolloverResult>> {
    const reader = new QueryReader(query);
    const dryRun = reader.boolean('dry_run') ?? false;
    reader.done();
    const result = await this.rollovers.rollover(body, dryRun, context);
    if (dryRun) void reply.status(200);
    return new WithMessage(result, dryRun ? 'Rollover checked' : 'Modules rolled over');
  }
}
