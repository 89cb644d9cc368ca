import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminOnly, ResponseMessage } from '../../core/decorators.js';
import { ApiErrors, ApiOk } from '../../openapi/openapi.js';
import { UserId } from '../../users/user-id.param.js';
import { CourseModulesService } from './course-modules.service.js';
import { type ModuleWithRole } from './module.mapper.js';
import { ModuleWithRoleSchema } from './module.schemas.js';
import { USER_NOT_FOUND_MESSAGE } from '../../users/users.errors.js';

/**
 * `GET /api/users/{user_id}/modules`: a user's modules, served from the module side so that `users/` needs
 * nothing of `course-modules/`.
 */
@ApiTags('Users')
@AdminOnly()
@Controller('users')
export class UserModulesController {
  constructor(private readonly service: CourseModulesService) {}

  @Get(':user_id/modules')
  @ResponseMessage('Modules for user retrieved successfully')
  @ApiOperation({ summary: 'The modules where a user holds a role (year descending, then code)' })
  @ApiOk(200, 'Modules for user retrieved successfully', { type: 'array', items: ModuleWithRoleSchema })
  @ApiErrors({ 404: [USER_NOT_FOUND_MESSAGE] })
  modules(@UserId() id: string): Promise<ModuleWithRole[]> {
    return this.service.ofUser(id);
  }
}
