import { ApiSingleRead } from '../openapi/openapi.js';
import { Body, Controller, Get, HttpCode, Post, Put, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { type RequestContext } from '../audit/audit-actions.js';
import { RequestCtx } from '../audit/request-context.decorator.js';
import { ApiAuthenticated, ApiErrors, ApiOk } from '../openapi/openapi.js';
import { UserAccountSchema } from '../users/user.schemas.js';
import { SessionSchema, SignInOptionsSchema } from './auth.schemas.js';
import { AdminOnly, CurrentUser, type AuthUser, Public, ResponseMessage } from '../core/decorators.js';
import { SSO_IDENTITY_TAKEN_MESSAGE } from '../users/users.errors.js';
import { LINK_TOKEN_MESSAGE, LinkIdentityDto } from './dto/link-identity.dto.js';
import { SsoIdentities } from './sso-identities.js';
import { AuthService, type Session, type SignInOptions } from './auth.service.js';
import { ChangePasswordDto, CURRENT_PASSWORD_MESSAGE } from './dto/change-password.dto.js';
import { LOGIN_PASSWORD_MESSAGE, LOGIN_USERNAME_MESSAGE, LoginDto } from './dto/login.dto.js';
import { LoginThrottleGuard } from './login-throttle.guard.js';
import { PasswordLoginGuard } from './password-login.guard.js';
import { type UserAccount } from '../users/user.shape.js';
import {
  MALFORMED_JSON_MESSAGE,
  UNKNOWN_PROPERTY_MESSAGE,
  UNSUPPORTED_CONTENT_TYPE_MESSAGE,
} from '../core/errors.js';
import {
  INVALID_CREDENTIALS_MESSAGE,
  LINK_WITH_PASSWORD_MESSAGE,
  PASSWORD_LOGIN_DISABLED_MESSAGE,
  SINGLE_SIGN_ON_ACCOUNT_MESSAGE,
  TOO_MANY_LOGINS_MESSAGE,
  WRONG_CURRENT_PASSWORD_MESSAGE,
} from './auth.errors.js';
import { PASSWORD_MESSAGE } from '../users/user-rules.js';

@ApiTags('Auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly identities: SsoIdentities,
  ) {}

  @Public()
  @UseGuards(PasswordLoginGuard, LoginThrottleGuard)
  @Post('login')
  @HttpCode(200)
  @ResponseMessage('Login successful')
  @ApiOperation({ summary: 'Sign in and get a bearer token' })
  @ApiOk(200, 'Login successful', SessionSchema)
  @ApiErrors({
    400: [MALFORMED_JSON_MESSAGE, LOGIN_USERNAME_MESSAGE, LOGIN_PASSWORD_MESSAGE],
    401: [INVALID_CREDENTIALS_MESSAGE],
    403: [PASSWORD_LOGIN_DISABLED_MESSAGE],
    415: [UNSUPPORTED_CONTENT_TYPE_MESSAGE],
    429: [TOO_MANY_LOGINS_MESSAGE],
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
  @ApiSingleRead()
  @ResponseMessage('User retrieved successfully')
  @ApiOperation({ summary: 'The signed-in user' })
  @ApiAuthenticated()
  @ApiOk(200, 'User retrieved successfully', UserAccountSchema)
  me(@CurrentUser() user: AuthUser): Promise<UserAccount> {
    return this.auth.me(user.id);
  }

  @AdminOnly()
  @Post('sso-binding')
  @HttpCode(200)
  @ResponseMessage('Single sign-on binding set')
  @ApiOperation({
    summary: 'Link your own identity at the identity provider to your account (admins)',
    description:
      'Send an access token the IdP issued to you; its `iss` and `sub` become your binding, so that your IdP ' +
      'tokens reach your account (an admin is never bound by merely naming their username). Call it signed in ' +
      'with your password (a token of `POST /api/auth/login`); a token in the body that fails verification ' +
      'answers 401 `Invalid or expired token`.',
  })
  @ApiOk(200, 'Single sign-on binding set', UserAccountSchema)
  @ApiErrors({
    400: [LINK_TOKEN_MESSAGE, UNKNOWN_PROPERTY_MESSAGE, MALFORMED_JSON_MESSAGE],
    403: [LINK_WITH_PASSWORD_MESSAGE],
    409: [SSO_IDENTITY_TAKEN_MESSAGE],
    415: [UNSUPPORTED_CONTENT_TYPE_MESSAGE],
  })
  linkIdentity(
    @CurrentUser() user: AuthUser,
    @Body() body: LinkIdentityDto,
    @RequestCtx() context: RequestContext,
  ): Promise<UserAccount> {
    return this.identities.linkOwn(user, body.token, context);
  }

  @UseGuards(PasswordLoginGuard)
  @Put('password')
  @ResponseMessage('Password changed successfully')
  @ApiOperation({
    summary: 'Change your password; tokens issued before the change stop working',
    description:
      'A wrong current password counts as a failed login for your username and your address (the login ' +
      'throttle); with password login disabled the route answers 403.',
  })
  // No @ApiAuthenticated(): its 401 would replace this route's own; the document's builder adds the bearer
  // security and merges the token 401s into it.
  @ApiOk(200, 'Password changed successfully', SessionSchema)
  @ApiErrors({
    400: [CURRENT_PASSWORD_MESSAGE, PASSWORD_MESSAGE, MALFORMED_JSON_MESSAGE, SINGLE_SIGN_ON_ACCOUNT_MESSAGE],
    401: [WRONG_CURRENT_PASSWORD_MESSAGE],
    403: [PASSWORD_LOGIN_DISABLED_MESSAGE],
    415: [UNSUPPORTED_CONTENT_TYPE_MESSAGE],
    429: [TOO_MANY_LOGINS_MESSAGE],
  })
  changePassword(
    @CurrentUser() user: AuthUser,
    @Body() body: ChangePasswordDto,
    @RequestCtx() context: RequestContext,
  ): Promise<Session> {
    return this.auth.changePassword(user.id, body, context);
  }
}
