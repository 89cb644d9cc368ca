import { jest } from '@jest/globals';
import { Clock } from '../../src/core/clock.js';
import { type TestApp } from './app.js';

/**
 * Moves the service's clock (its token and user caches) forward, instead of waiting for them to expire. The
 * caller undoes it after each test: `afterEach(() => jest.restoreAllMocks())`.
 */
export function advanceClock(app: TestApp, ms: number): void {
  const clock = app.service.app.get(Clock);
  const now = clock.now.bind(clock);
  jest.spyOn(clock, 'now').mockImplementation(() => now() + ms);
}
