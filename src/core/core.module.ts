import { Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { AdminGuard } from './admin.guard.js';
import { Clock } from './clock.js';
import { EnvelopeInterceptor } from './envelope.interceptor.js';
import { AllExceptionsFilter } from './exception.filter.js';
import { JwtAuthGuard } from './jwt-auth.guard.js';
import { Preconditions } from './preconditions.js';
import { AppValidationPipe } from './validation.js';

/**
 * The cross-cutting behaviour of every route, registered once as providers so tests get exactly production's;
 * global so that the caches of every feature read the one {@link Clock}.
 */
@Global()
@Module({
  providers: [
    Clock,
    Preconditions,
    { provide: APP_GUARD, useClass: JwtAuthGuard },
    { provide: APP_GUARD, useClass: AdminGuard },
    { provide: APP_PIPE, useClass: AppValidationPipe },
    { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
  exports: [Clock, Preconditions],
})
export class CoreModule {}
