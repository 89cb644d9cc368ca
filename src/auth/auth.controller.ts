import { Body, Controller, Get, HttpCode, Post, Put, Req, UseGuards } from '@nestjs/common';
import { type FastifyRequest } from 'fastify';
import { CurrentUser, type AuthUser, Public, ResponseMessage } from '../core/decorators.js';
import { AuthService, type Session } from './auth.service.js';
import { ChangePasswordDto } from './dto/change-password.dto.js';
import { LoginDto } from './dto/login.dto.js';
import { LoginThrottleGuard } from './login-throttle.guard.js';
import { type UserSummary } from '../users/user.mapper.js';

@Controller('auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @UseGuards(LoginThrottleGuard)
  @Post('login')
  @HttpCode(200)
  @ResponseMessage('Login successful')
  login(@Body() body: LoginDto, @Req() request: FastifyRequest): Promise<Session> {
    return this.auth.login(body, request.ip);
  }

  @Get('me')
  @ResponseMessage('User retrieved successfully')
  me(@CurrentUser() user: AuthUser): Promise<UserSummary> {
    return this.auth.me(user.id);
  }

  @Put('password')
  @ResponseMessage('Password changed successfully')
  changePassword(@CurrentUser() user: AuthUser, @Body() body: ChangePasswordDto): Promise<Session> {
    return this.auth.changePassword(user.id, body);
  }
}
