import { Body, Controller, Delete, Get, Post, Put, Query } from '@nestjs/common';
import {
  AdminOnly,
  type AuthUser,
  CurrentUser,
  FailureMessage,
  ResponseMessage,
  WithMessage,
} from '../core/decorators.js';
import { INTERNAL_ERROR_MESSAGE } from '../core/errors.js';
import { type Query as QueryParams } from '../core/query.js';
import { bulkDeleteMessage, type BulkDeleteResult } from './bulk-delete.js';
import { CourseModulesService, type ModuleList } from './course-modules.service.js';
import { BulkDeleteDto } from './dto/bulk-delete.dto.js';
import { type ModuleInput } from './dto/module-body.dto.js';
import { ModuleBodyPipe } from './dto/module-body.pipe.js';
import { ModuleIdParam } from './module-id.param.js';
import { readModuleListParams } from './list-params.js';
import { type ModuleResponse, type ModuleWithPersonnel, type MyModules } from './module.mapper.js';

@Controller('modules')
export class CourseModulesController {
  constructor(private readonly modules: CourseModulesService) {}

  @Get()
  @ResponseMessage('Modules retrieved successfully')
  @FailureMessage(INTERNAL_ERROR_MESSAGE)
  list(@CurrentUser() user: AuthUser, @Query() query: QueryParams): Promise<ModuleList> {
    return this.modules.list(user, readModuleListParams(query));
  }

  @Get('me')
  @ResponseMessage('My module details retrieved successfully')
  @FailureMessage('An error occurred while retrieving module details')
  mine(@CurrentUser() user: AuthUser): Promise<MyModules> {
    return this.modules.mine(user.id);
  }

  @Get(':module_id')
  @ResponseMessage('Module retrieved successfully')
  @FailureMessage('Database error retrieving module')
  read(@ModuleIdParam() id: string, @CurrentUser() user: AuthUser): Promise<ModuleWithPersonnel> {
    return this.modules.read(id, user);
  }

  @Post()
  @AdminOnly()
  @ResponseMessage('Module created successfully')
  create(@Body(ModuleBodyPipe) body: ModuleInput): Promise<ModuleResponse> {
    return this.modules.create(body);
  }

  @Put(':module_id')
  @AdminOnly()
  @ResponseMessage('Module updated successfully')
  update(@ModuleIdParam() id: string, @Body(ModuleBodyPipe) body: ModuleInput): Promise<ModuleResponse> {
    return this.modules.update(id, body);
  }

  @Delete('bulk')
  @AdminOnly()
  async bulkRemove(@Body() body: BulkDeleteDto): Promise<WithMessage<BulkDeleteResult>> {
    const result = await this.modules.bulkRemove(body.module_ids);
    return new WithMessage(result, bulkDeleteMessage(result, body.module_ids.length));
  }

  @Delete(':module_id')
  @AdminOnly()
  @ResponseMessage('Module deleted successfully')
  async remove(@ModuleIdParam() id: string): Promise<null> {
    await this.modules.remove(id);
    return null;
  }
}
