import type { TestDatabase } from './global-setup.js';

export default async function globalTeardown(): Promise<void> {
  const holder = globalThis as { __testDatabase?: TestDatabase };
  const database = holder.__testDatabase;
  holder.__testDatabase = undefined;
  await database?.stop();
}
