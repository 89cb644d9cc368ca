import { Body, Controller, Get, HttpCode, Post, Put, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { type RequestContext } from '../audit/audit-actions.js';
import { RequestCtx } from '../audit/request-context.decorator.js';
import { ApiAuthenticated, ApiErrors, ApiOk } from '../openapi/openapi.js';
import { UserSummarySchema } from '../users/user.schemas.js';
import { SessionSchema, SignInOptionsSchema } from './auth.schemas.js';
import { CurrentUser, type AuthUser, Public, ResponseMessage } from '../core/decorators.js';
import { AuthService, type Session, type SignInOptions } from './auth.service.js';
import { ChangePasswordDto } from './dto/change-password.dto.js';
import { LoginDto } from './dto/login.dto.js';
import { LoginThrottleGuard } from './login-throttle.guard.js';
import { PasswordLoginGuard } from './password-login.guard.js';
import { type UserSummary } from '../users/user.mapper.js';

@ApiTags('Auth')
@Controller('auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @UseGuards(PasswordLoginGuard, LoginThrottleGuard)
  @Post('login')
  @HttpCode(200)
  @ResponseMessage('Login successful')
  @ApiOperation({ summary: 'Sign in and get a bearer token' })
  @ApiOk(200, 'Login successful', SessionSchema)
  @ApiErrors({
    400: ['Malformed JSON body', 'username must be a string of 1-320 characters'],
    401: ['Invalid username or password'],
    403: ['Password login is disabled; use single sign-on'],
    415: ['Unsupported content type'],
    429: ['Too many requests, try again later'],
  })
  login(@Body() body: LoginDto, @RequestCtx() context: RequestContext): Promise<Session> {
    return this.auth.login(body, context);
  }

  @Public()
  @Get('config')
  @ResponseMessage('Sign-in options retrieved successfully')
  @ApiOperation({
    summary: 'How to sign in: password login and the identity provider (single sign-on), for web clients',
  })
  @ApiOk(200, 'Sign-in options retrieved successfully', SignInOptionsSchema)
  config(): Promise<SignInOptions> {
    return this.auth.signInOptions();
  }

  @Get('me')
  @ResponseMessage('User retrieved successfully')
  @ApiOperation({ summary: 'The signed-in user' })
  @ApiAuthenticated()
  @ApiOk(200, 'User retrieved successfully', UserSummarySchema)
  me(@CurrentUser() user: AuthUser): Promise<UserSummary> {
    return this.auth.me(user.id);
  }

  @Put('password')
  @ResponseMessage('Password changed successfully')
  @ApiOperation({ summary: 'Change your password; tokens issued before the change stop working' })
  @ApiAuthenticated()
  @ApiOk(200, 'Password changed successfully', SessionSchema)
  @ApiErrors({
    400: [
      'Password must be 8-128 characters',
      'Malformed JSON body',
      'This account signs in with single sign-on',
    ],
    401: ['Current password is incorrect'],
    415: ['Unsupported content type'],
  })
  changePassword(
    @CurrentUser() user: AuthUser,
    @Body() body: ChangePasswordDto,
    @RequestCtx() context: RequestContext,
  ): Promise<Session> {
    return this.auth.changePassword(user.id, body, context);
  }
}
