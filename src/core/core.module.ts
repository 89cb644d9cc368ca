import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { AdminGuard } from './admin.guard.js';
import { EnvelopeInterceptor } from './envelope.interceptor.js';
import { AllExceptionsFilter } from './exception.filter.js';
import { JwtAuthGuard } from './jwt-auth.guard.js';
import { AppValidationPipe } from './validation.js';

/** The cross-cutting behaviour of every route, registered once as providers so tests get exactly production's. */
@Module({
  providers: [
    { provide: APP_GUARD, useClass: JwtAuthGuard },
    { provide: APP_GUARD, useClass: AdminGuard },
    { provide: APP_PIPE, useClass: AppValidationPipe },
    { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
})
export class CoreModule {}
