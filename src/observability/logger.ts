import { type LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';
import { type LogLevel } from '../config/app-config.js';

/** JSON logs; credentials are redacted should a header or body ever be logged. */
export function createRootLogger(level: LogLevel): Logger {
  return pino({
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
      ],
      censor: '[redacted]',
    },
  });
}

/** Nest's own log lines (bootstrap, lifecycle, filter) through the same pino instance. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  private write(
    level: 'info' | 'error' | 'warn' | 'debug' | 'trace',
    message: unknown,
    params: unknown[],
  ): void {
    const context = typeof params.at(-1) === 'string' ? (params.at(-1) as string) : undefined;
    this.logger[level]({ context }, typeof message === 'string' ? message : JSON.stringify(message));
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
