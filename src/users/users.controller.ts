import { ApiIfMatch, ApiSingleRead } from '../openapi/openapi.js';
import { IfMatch, Preconditions } from '../core/preconditions.js';
import { SingleRead } from '../core/validators.js';
import { Body, Controller, Delete, Get, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { type RequestContext } from '../audit/audit-actions.js';
import { RequestCtx } from '../audit/request-context.decorator.js';
import { AdminOnly, type AuthUser, CurrentUser, ResponseMessage } from '../core/decorators.js';
import { type JsonText } from '../core/json-text.js';
import { ApiErrors, ApiOk, ApiPagingQuery, ApiSortQuery } from '../openapi/openapi.js';
import { INVALID_SORT_MESSAGE, PAGING_MESSAGES, type Query as QueryParams } from '../core/query.js';
import { readUserListParams } from './user-list-filter.js';
import { BulkCreateUsersDto } from './dto/bulk-create-users.dto.js';
import { CreateUserDto } from './dto/create-user.dto.js';
import { UpdateUserDto } from './dto/update-user.dto.js';
import {
  ACTIVE_MESSAGE,
  ADMIN_MESSAGE,
  BULK_EMPTY_MESSAGE,
  BULK_TOO_MANY_MESSAGE,
  DISPLAY_NAME_MESSAGE,
  EMAIL_MESSAGE,
  EXTERNAL_ID_MESSAGE,
  FAMILY_NAME_MESSAGE,
  GIVEN_NAME_MESSAGE,
  PASSWORD_MESSAGE,
  USERNAME_MESSAGE,
} from './user-rules.js';
import { UserId } from './user-id.param.js';
import { UserListSchema, UserAccountSchema } from './user.schemas.js';
import { type UserAccount } from './user.shape.js';
import { type UserPage, UsersService } from './users.service.js';
import { NOTHING_TO_UPDATE_MESSAGE, UNKNOWN_PROPERTY_MESSAGE } from '../core/errors.js';
import {
  CANNOT_DEACTIVATE_SELF_MESSAGE,
  CANNOT_DELETE_SELF_MESSAGE,
  CANNOT_DEMOTE_SELF_MESSAGE,
  DUPLICATE_EXTERNAL_ID_MESSAGE,
  SSO_IDENTITY_TAKEN_MESSAGE,
  USER_NOT_FOUND_MESSAGE,
} from './users.errors.js';
import { SetSsoBindingDto, SSO_ISSUER_MESSAGE, SSO_SUBJECT_MESSAGE } from './dto/set-sso-binding.dto.js';

const FIELD_MESSAGES = [
  USERNAME_MESSAGE,
  EMAIL_MESSAGE,
  PASSWORD_MESSAGE,
  ADMIN_MESSAGE,
  GIVEN_NAME_MESSAGE,
  FAMILY_NAME_MESSAGE,
  DISPLAY_NAME_MESSAGE,
  EXTERNAL_ID_MESSAGE,
  ACTIVE_MESSAGE,
];
const DUPLICATE_MESSAGES = [
  'A user with this username already exists',
  'A user with this email already exists',
  DUPLICATE_EXTERNAL_ID_MESSAGE,
];
const textFilter = (name: string, description: string) =>
  ApiQuery({ name, required: false, description, schema: { type: 'string', example: 'smith' } });

@ApiTags('Users')
@AdminOnly()
@Controller('users')
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly preconditions: Preconditions,
  ) {}

  @Get()
  @ResponseMessage('Users retrieved successfully')
  @ApiOperation({ summary: 'List users, filtered, sorted and paged' })
  @textFilter(
    'query',
    'Username, email, given, family or display name, or external_id contains this text (case-insensitive, literal).',
  )
  @textFilter('username', 'Username contains this text (case-insensitive, literal).')
  @textFilter('email', 'Email contains this text (case-insensitive, literal).')
  @ApiQuery({
    name: 'admin',
    required: false,
    description: 'Only administrators, or only others.',
    schema: { type: 'boolean' },
  })
  @ApiQuery({
    name: 'active',
    required: false,
    description: 'Only active users, or only inactive ones.',
    schema: { type: 'boolean' },
  })
  @ApiPagingQuery()
  @ApiSortQuery(['username', 'email', 'created_at', 'admin'], 'id')
  @ApiOk(200, 'Users retrieved successfully', UserListSchema)
  @ApiErrors({
    400: [
      ...PAGING_MESSAGES,
      'admin must be true or false',
      'active must be true or false',
      INVALID_SORT_MESSAGE,
    ],
  })
  list(@Query() query: QueryParams): Promise<JsonText<UserPage>> {
    return this.users.list(readUserListParams(query));
  }

  @Post()
  @ResponseMessage('User created successfully')
  @ApiOperation({ summary: 'Create a user' })
  @ApiOk(201, 'User created successfully', UserAccountSchema)
  @ApiErrors({ 400: [...FIELD_MESSAGES, UNKNOWN_PROPERTY_MESSAGE], 409: DUPLICATE_MESSAGES })
  create(@Body() body: CreateUserDto, @RequestCtx() context: RequestContext): Promise<UserAccount> {
    return this.users.create(body, context);
  }

  @Post('bulk')
  @ResponseMessage('Users created successfully')
  @ApiOperation({
    summary: 'Create up to 500 users at once, all or nothing',
    description:
      'Answers the users in input order. Invalid entries are named by index (`users[0]: …`); a clash with a ' +
      'stored user or inside the batch lists every clashing username or email, as sent, and creates nothing.',
  })
  @ApiOk(201, 'Users created successfully', { type: 'array', items: UserAccountSchema })
  @ApiErrors({
    400: [
      BULK_EMPTY_MESSAGE,
      BULK_TOO_MANY_MESSAGE,
      `users[0]: ${PASSWORD_MESSAGE}; users[2]: ${EMAIL_MESSAGE}`,
    ],
    409: ['A user with this username or email already exists: <values>', DUPLICATE_EXTERNAL_ID_MESSAGE],
  })
  createMany(
    @Body() body: BulkCreateUsersDto,
    @RequestCtx() context: RequestContext,
  ): Promise<UserAccount[]> {
    return this.users.createMany(body.users, context);
  }

  @Get(':user_id')
  @ApiSingleRead()
  @ResponseMessage('User retrieved successfully')
  @ApiOperation({ summary: 'Read a user' })
  @ApiOk(200, 'User retrieved successfully', UserAccountSchema)
  @ApiErrors({ 404: [USER_NOT_FOUND_MESSAGE] })
  get(@UserId() id: string): Promise<UserAccount> {
    return this.users.get(id);
  }

  @Put(':user_id')
  @SingleRead()
  @ApiIfMatch()
  @ResponseMessage('User updated successfully')
  @ApiOperation({
    summary: 'Change any of username, email, password, admin, the names, external_id and active',
    description:
      "A new password makes the user's earlier tokens stop working. `active: false` deactivates the user: " +
      'password login is refused and every token of theirs stops working within 5 s; memberships are kept.',
  })
  @ApiOk(200, 'User updated successfully', UserAccountSchema)
  @ApiErrors({
    400: [NOTHING_TO_UPDATE_MESSAGE, ...FIELD_MESSAGES, UNKNOWN_PROPERTY_MESSAGE],
    403: [CANNOT_DEMOTE_SELF_MESSAGE, CANNOT_DEACTIVATE_SELF_MESSAGE],
    404: [USER_NOT_FOUND_MESSAGE],
    409: DUPLICATE_MESSAGES,
  })
  async update(
    @UserId() id: string,
    @Body() body: UpdateUserDto,
    @CurrentUser() caller: AuthUser,
    @RequestCtx() context: RequestContext,
    @IfMatch() ifMatch: string | undefined,
  ): Promise<UserAccount> {
    return this.users.update(id, body, caller, context, this.preconditions.expect(ifMatch));
  }

  @Delete(':user_id/sso-binding')
  @ResponseMessage('Single sign-on binding removed')
  @ApiOperation({
    summary: "Remove the user's single sign-on binding",
    description:
      "The user is no longer bound to the identity provider's subject: the next IdP token naming the user's " +
      "username binds it again (to that token's subject), unless the user is an admin: an admin is bound only " +
      'by PUT on this path, `POST /api/auth/sso-binding` or ADMIN_OIDC_SUBJECT.',
  })
  @ApiOk(200, 'Single sign-on binding removed', UserAccountSchema)
  @ApiErrors({ 404: [USER_NOT_FOUND_MESSAGE] })
  clearSsoBinding(@UserId() id: string, @RequestCtx() context: RequestContext): Promise<UserAccount> {
    return this.users.clearSsoBinding(id, context);
  }

  @Put(':user_id/sso-binding')
  @ResponseMessage('Single sign-on binding set')
  @ApiOperation({
    summary: "Bind the user to an identity provider's (issuer, subject)",
    description:
      'IdP tokens carrying this `iss` and `sub` reach the user from now on, replacing any binding the user had. The ' +
      'only way, besides `POST /api/auth/sso-binding` and ADMIN_OIDC_SUBJECT, to bind an administrator: no IdP ' +
      'token binds an admin by naming their username or external id.',
  })
  @ApiOk(200, 'Single sign-on binding set', UserAccountSchema)
  @ApiErrors({
    400: [SSO_ISSUER_MESSAGE, SSO_SUBJECT_MESSAGE, UNKNOWN_PROPERTY_MESSAGE],
    404: [USER_NOT_FOUND_MESSAGE],
    409: [SSO_IDENTITY_TAKEN_MESSAGE],
  })
  setSsoBinding(
    @UserId() id: string,
    @Body() body: SetSsoBindingDto,
    @RequestCtx() context: RequestContext,
  ): Promise<UserAccount> {
    return this.users.setSsoBinding(id, body.issuer, body.subject, context);
  }

  @Delete(':user_id')
  @ApiIfMatch()
  @ResponseMessage('User deleted successfully')
  @ApiOperation({ summary: 'Delete a user with their role assignments and avatar' })
  @ApiOk(200, 'User deleted successfully', null)
  @ApiErrors({ 403: [CANNOT_DELETE_SELF_MESSAGE], 404: [USER_NOT_FOUND_MESSAGE] })
  async remove(
    @UserId() id: string,
    @CurrentUser() caller: AuthUser,
    @RequestCtx() context: RequestContext,
    @IfMatch() ifMatch: string | undefined,
  ): Promise<null> {
    await this.users.remove(id, caller, context, this.preconditions.expect(ifMatch));
    return null;
  }
}
