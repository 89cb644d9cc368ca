import { Injectable } from '@nestjs/common';

/**
 * The time the request pipeline's caches read (remembered tokens, the user re-check): milliseconds since the
 * epoch. One instance per application, so a test can move it forward instead of waiting for a cache to expire.
 */
@Injectable()
export class Clock {
  now(): number {
    return Date.now();
  }
}
