import { Body, Controller, Delete, Get, Param, Post, Put, Query } from '@nestjs/common';
import { AdminOnly, type AuthUser, CurrentUser, ResponseMessage } from '../core/decorators.js';
import { IdPipe } from '../core/id.pipe.js';
import { type Query as QueryParams } from '../core/query.js';
import { BulkCreateUsersDto } from './dto/bulk-create-users.dto.js';
import { CreateUserDto } from './dto/create-user.dto.js';
import { UpdateUserDto } from './dto/update-user.dto.js';
import { type UserSummary } from './user.mapper.js';
import { type UserModule, type UserPage, UsersService } from './users.service.js';

const UserId = () => Param('user_id', new IdPipe('user_id'));

@AdminOnly()
@Controller('users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Get()
  @ResponseMessage('Users retrieved successfully')
  list(@Query() query: QueryParams): Promise<UserPage> {
    return this.users.list(query);
  }

  @Post()
  @ResponseMessage('User created successfully')
  create(@Body() body: CreateUserDto): Promise<UserSummary> {
    return this.users.create(body);
  }

  @Post('bulk')
  @ResponseMessage('Users created successfully')
  createMany(@Body() body: BulkCreateUsersDto): Promise<UserSummary[]> {
    return this.users.createMany(body.users);
  }

  @Get(':user_id')
  @ResponseMessage('User retrieved successfully')
  get(@UserId() id: string): Promise<UserSummary> {
    return this.users.get(id);
  }

  @Put(':user_id')
  @ResponseMessage('User updated successfully')
  update(
    @UserId() id: string,
    @Body() body: UpdateUserDto,
    @CurrentUser() caller: AuthUser,
  ): Promise<UserSummary> {
    return this.users.update(id, body, caller);
  }

  @Delete(':user_id')
  @ResponseMessage('User deleted successfully')
  async remove(@UserId() id: string, @CurrentUser() caller: AuthUser): Promise<null> {
    await this.users.remove(id, caller);
    return null;
  }

  @Get(':user_id/modules')
  @ResponseMessage('Modules for user retrieved successfully')
  modules(@UserId() id: string): Promise<UserModule[]> {
    return this.users.modulesOf(id);
  }
}
