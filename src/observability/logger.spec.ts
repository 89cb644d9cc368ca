import { Logger } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { createRootLogger, NestPinoLogger } from './logger.js';

/** A root logger whose JSON lines are kept in `lines`. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createRootLogger('info', {
    write: (line: string) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  return { lines, nest: new NestPinoLogger(logger) };
}

function failure(): Error {
  return new Error('the disk is full');
}

describe('NestPinoLogger', () => {
  it("keeps the stack Nest passes beside an error's message, under err.stack", () => {
    const { lines, nest } = capture();
    const error = failure();
    // What `new Logger('Exceptions').error(message, stack)` hands the logger.
    nest.error(error.message, error.stack, 'Exceptions');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 50,
      context: 'Exceptions',
      msg: 'the disk is full',
      err: { message: 'the disk is full', stack: error.stack },
    });
    expect((lines[0].err as { stack: string }).stack).toMatch(/\n\s+at failure /);
  });

  it('writes an Error given as the message with its type, message and stack', () => {
    const { lines, nest } = capture();
    const error = failure();
    nest.error(error, 'Startup');
    expect(lines[0]).toMatchObject({
      context: 'Startup',
      msg: 'the disk is full',
      err: { type: 'Error', message: 'the disk is full', stack: error.stack },
    });
  });

  it("through Nest's own Logger, as every service's logger calls it", () => {
    const { lines, nest } = capture();
    const error = failure();
    const logger = new Logger('Deliveries');
    Logger.overrideLogger(nest);
    try {
      logger.error('Recording deliveries failed', error.stack);
      logger.warn('A receiver timed out');
    } finally {
      Logger.overrideLogger(false);
    }
    expect(lines.map(({ level, context, msg }) => ({ level, context, msg }))).toEqual([
      { level: 50, context: 'Deliveries', msg: 'Recording deliveries failed' },
      { level: 40, context: 'Deliveries', msg: 'A receiver timed out' },
    ]);
    expect(lines[0].err).toMatchObject({ message: 'Recording deliveries failed', stack: error.stack });
    expect(lines[1].err).toBeUndefined();
  });

  it('writes a message without a stack as before: the text and the context only', () => {
    const { lines, nest } = capture();
    nest.log('Applied migrations', 'Database');
    nest.error('No stack here');
    expect(lines.map(({ context, msg, err }) => ({ context, msg, err }))).toEqual([
      { context: 'Database', msg: 'Applied migrations', err: undefined },
      { context: undefined, msg: 'No stack here', err: undefined },
    ]);
  });

  it('writes an Error given after the message with its stack, at any level, and leaves out SQL parameters', () => {
    const { lines, nest } = capture();
    const error = failure();
    const failed = new QueryFailedError('UPDATE webhooks SET secret = $1', ['whsec_secret'], failure());
    const logger = new Logger('Sweeps');
    Logger.overrideLogger(nest);
    try {
      logger.warn('Sweep of stray avatar files failed', error);
      logger.error('Recording deliveries failed', failed);
    } finally {
      Logger.overrideLogger(false);
    }
    expect(lines[0]).toMatchObject({
      level: 40,
      context: 'Sweeps',
      msg: 'Sweep of stray avatar files failed',
      err: { type: 'Error', message: 'the disk is full', stack: error.stack },
    });
    expect(lines[1]).toMatchObject({
      level: 50,
      msg: 'Recording deliveries failed',
      err: { type: 'QueryFailedError' },
    });
    expect(JSON.stringify(lines[1])).not.toContain('whsec_secret');
  });
});
