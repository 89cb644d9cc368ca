import { type LoggerService } from '@nestjs/common';
import pino, { type DestinationStream, type Logger } from 'pino';
import { type LogLevel } from '../config/app-config.js';

/** JSON logs; credentials are redacted should a header or body ever be logged. */
export function createRootLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'module-admin-service' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        '*.password',
        '*.current_password',
        '*.new_password',
        '*.token',
        'DATABASE_URL',
        'DATABASE_PASSWORD',
        'url',
        // A failed statement's bind values (TypeORM's QueryFailedError) may hold secrets or personal data.
        'err.parameters',
      ],
      censor: '[redacted]',
    },
  };
  // Standard output unless a test gives a stream to read the lines from.
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Nest's own log lines (bootstrap, lifecycle, filter, every `new Logger(context)`) through the same pino instance.
 * Nest calls `error(message, stack?, context?)`: the stack goes into the line as `err.stack` (as pino writes an
 * Error's); an Error given as the message, or after it at any level, is written by pino's error serializer,
 * stack included.
 */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  private write(
    level: 'info' | 'error' | 'warn' | 'debug' | 'trace',
    message: unknown,
    params: unknown[],
  ): void {
    const context =
      params.length > 0 && typeof params.at(-1) === 'string' ? (params.at(-1) as string) : undefined;
    if (message instanceof Error) {
      this.logger[level]({ context, err: message }, message.message);
      return;
    }
    const text = typeof message === 'string' ? message : JSON.stringify(message);
    const rest = context === undefined ? params : params.slice(0, -1);
    const error = rest.find((param) => param instanceof Error);
    if (error !== undefined) {
      this.logger[level]({ context, err: error }, text);
      return;
    }
    const stack = level === 'error' ? rest.find((param) => typeof param === 'string') : undefined;
    this.logger[level](stack === undefined ? { context } : { context, err: { message: text, stack } }, text);
  }

  log(message: unknown, ...params: unknown[]) {
    this.write('info', message, params);
  }
  error(message: unknown, ...params: unknown[]) {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]) {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]) {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]) {
    this.write('trace', message, params);
  }
}
