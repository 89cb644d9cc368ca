import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { AuditModule } from '../audit/audit.module.js';
import { UsersModule } from '../users/users.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { AdminBootstrap } from './admin-bootstrap.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { IdpTokens } from './idp-tokens.js';
import { jwtKey } from './jwt-key.js';
import { JwtStrategy } from './jwt.strategy.js';
import { LoginThrottle, MemoryLoginThrottle } from './login-throttle.js';
import { RedisLoginThrottle } from './login-throttle-redis.js';
import { REDIS } from '../redis/redis.module.js';
import { type Redis } from 'ioredis';
import { RememberedBearer } from '../core/remembered-bearer.js';
import { LoginThrottleGuard } from './login-throttle.guard.js';
import { PasswordLoginGuard } from './password-login.guard.js';
import { SsoIdentities } from './sso-identities.js';
import { TokenService } from './token.service.js';
import { EventsModule } from '../events/events.module.js';

@Module({
  imports: [
    UsersModule,
    TokensModule,
    AuditModule,
    EventsModule,
    PassportModule,
    JwtModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        // The typings say string | Buffer; jsonwebtoken takes a KeyObject too (see jwt-key.ts).
        secret: jwtKey(config.jwtSecret!) as unknown as Buffer,
        signOptions: { algorithm: 'HS256' },
        verifyOptions: { algorithms: ['HS256'] },
      }),
    }),
  ],
  controllers: [AuthController],
  providers: [
    AuthService,
    AdminBootstrap,
    JwtStrategy,
    // The JWT guard (core/) answers remembered tokens through the strategy without passport's per-request context.
    { provide: RememberedBearer, useExisting: JwtStrategy },
    {
      provide: LoginThrottle,
      inject: [REDIS, APP_CONFIG],
      useFactory: (redis: Redis | null, config: AppConfig) =>
        redis ? new RedisLoginThrottle(redis, config.redisKeyPrefix) : new MemoryLoginThrottle(),
    },
    LoginThrottleGuard,
    PasswordLoginGuard,
    IdpTokens,
    SsoIdentities,
    TokenService,
  ],
  exports: [TokenService],
})
export class AuthModule {}
