import { ApiIfMatch } from '../../openapi/openapi.js';
import { Body, Controller, HttpCode, Patch, Res } from '@nestjs/common';
import { type FastifyReply } from 'fastify';
import { currentETag, IfMatch, Preconditions } from '../../core/preconditions.js';
import { CourseModulesService } from '../modules/course-modules.service.js';
import { ApiTags } from '@nestjs/swagger';
import { type RequestContext } from '../../audit/audit-actions.js';
import { RequestCtx } from '../../audit/request-context.decorator.js';
import { type AuthUser, CurrentUser } from '../../core/decorators.js';
import { membershipChangeOf } from '../membership/dto/membership-fields.js';
import { MembersPatchBodyDto } from './dto/personnel-body.dto.js';
import { UpdatedCountSchema } from './personnel.schemas.js';
import { ModuleIdParam } from '../modules/module-id.param.js';
import { ApiMembersUpdate } from './module-user-routes.js';
import { PersonnelService } from './personnel.service.js';

/** docs/api.md §15: the lifecycle of a module's memberships (status and dates), whatever the role. */
@ApiTags('Personnel')
@Controller('modules/:module_id/members')
export class MembersController {
  constructor(
    private readonly personnel: PersonnelService,
    private readonly modules: CourseModulesService,
    private readonly preconditions: Preconditions,
  ) {}

  @Patch()
  @ApiIfMatch()
  @HttpCode(200)
  @ApiMembersUpdate(
    'Memberships updated',
    {
      summary: "Change members' status and dates in a module",
      description:
        'Sets `status`, `starts_at`, `ends_at` (those given) of every named member, keeping their roles; all or ' +
        "nothing. Access as personnel and student assignment, for each member's role: admins, and Lecturers of " +
        'the module for members other than Lecturers. Every named user must hold a role in the module (409).',
    },
    UpdatedCountSchema,
  )
  async update(
    @ModuleIdParam() id: string,
    @CurrentUser() user: AuthUser,
    @Body() body: MembersPatchBodyDto,
    @RequestCtx() context: RequestContext,
    @IfMatch() ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<{ updated: number }> {
    const read = () => this.modules.read(id, user);
    await this.preconditions.check(ifMatch, read);
    const updated = await this.personnel.updateMembers(
      id,
      user,
      body.user_ids,
      membershipChangeOf(body),
      context,
    );
    void reply.header('etag', await currentETag(read));
    return { updated };
  }
}
