import { Injectable } from '@nestjs/common';
import { DatabaseProbe } from '../database/database-probe.js';

const PING_TIMEOUT_MS = 1000;

/** Whether the service can do its work: the database answers within a second. */
@Injectable()
export class HealthService {
  constructor(private readonly database: DatabaseProbe) {}

  /** `SELECT 1` within a second; a pool that cannot hand out a connection counts as down too. */
  async databaseUp(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>(
      (resolve) => (timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS)),
    );
    const ping = this.database.ping().then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([ping, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
