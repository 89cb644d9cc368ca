import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  StreamableFile,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { type FastifyReply } from 'fastify';
import { catchError, map, type Observable, throwError } from 'rxjs';
import { AppError, INTERNAL_ERROR_MESSAGE, InternalFailure } from './errors.js';
import { FAILURE_MESSAGE, RESPONSE_MESSAGE, WithMessage } from './decorators.js';
import { JsonText } from './json-text.js';

export interface Envelope<T = unknown> {
  success: boolean;
  data: T;
  message: string;
}

/**
 * Wraps every handler result as `{ success: true, data, message }` and turns an unexpected error
 * (a database failure) into the route's 500 message; files pass through untouched, and JSON text (JsonText) is
 * wrapped as text.
 */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handler = context.getHandler();
    const message = this.reflector.get<string | undefined>(RESPONSE_MESSAGE, handler) ?? 'OK';
    const failure =
      this.reflector.get<string | undefined>(FAILURE_MESSAGE, handler) ?? INTERNAL_ERROR_MESSAGE;
    return next.handle().pipe(
      map((result: unknown) => {
        if (result instanceof StreamableFile) return result;
        if (result instanceof JsonText) {
          // Fastify sends a string with a JSON content type as it is.
          context.switchToHttp().getResponse<FastifyReply>().type('application/json; charset=utf-8');
          return `{"success":true,"data":${result.json},"message":${JSON.stringify(message)}}`;
        }
        if (result instanceof WithMessage) {
          const { data, message: custom } = result as WithMessage<unknown>;
          return { success: true, data: data ?? null, message: custom };
        }
        return { success: true, data: result ?? null, message };
      }),
      catchError((error: unknown) =>
        throwError(() => (error instanceof AppError ? error : new InternalFailure(failure, error))),
      ),
    );
  }
}
