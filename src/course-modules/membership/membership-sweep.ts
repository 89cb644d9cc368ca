import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { type AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { Transactions } from '../../database/transactions.js';
import { type MembersChanged, type NewChangeEvent } from '../../events/change-event-types.js';
import { ChangeEventsService } from '../../events/change-events.service.js';
import { membersChange } from './membership-changes.js';
import { ModuleRolesRepository } from './module-roles.repository.js';

/** Rows marked per transaction; a sweep with more goes on in further transactions at once. */
const BATCH = 10_000;

/**
 * The time-based events of the membership lifecycle (docs/api.md §15, docs/decisions.md): every
 * MEMBERSHIP_SWEEP_INTERVAL_MS each replica tries to sweep; the one that takes the advisory lock finds the
 * memberships whose `starts_at` or `ends_at` has passed since their effective status was last reported, writes
 * one `module.members_changed` event per module with their new effective statuses (`effective`) and marks them
 * reported, in one transaction. Replicas that do not get the lock skip that round; a row is marked under its row
 * lock, so even two sweeps at once could not report it twice. An event follows its date by at most one interval
 * plus the sweep's own time.
 */
@Injectable()
export class MembershipSweep implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MembershipSweep.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  /** Rounds this replica has finished (whether or not it held the sweep): what a test waits on. */
  rounds = 0;

  constructor(
    private readonly transactions: Transactions,
    private readonly roles: ModuleRolesRepository,
    private readonly changeEvents: ChangeEventsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.backgroundWorkers) return;
    this.timer = setInterval(() => this.tick(), this.config.membershipSweepIntervalMs).unref();
    this.tick();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One round, unless the last one is still running; a failure is logged and the next round tries again. */
  private tick(): void {
    if (this.running) return;
    this.running = this.sweep()
      .catch((error: unknown) => this.logger.warn('Membership sweep failed', error))
      .finally(() => {
        this.rounds++;
        this.running = undefined;
      });
  }

  /** Reports every window that has passed; returns how many memberships were reported (0 if another replica holds the sweep). */
  async sweep(): Promise<number> {
    let total = 0;
    for (;;) {
      const marked = await this.transactions.run(async (transaction) => {
        if (!(await this.roles.tryLockSweep(transaction))) return 0;
        const rows = await this.roles.markPassedWindows(BATCH, transaction);
        const byModule = new Map<string, MembersChanged>();
        for (const row of rows) {
          let change = byModule.get(row.moduleId);
          if (!change) {
            change = { ...membersChange(row.moduleId), effective: [] };
            byModule.set(row.moduleId, change);
          }
          change.effective!.push({ user_id: Number(row.userId), effective_status: row.effective });
        }
        const events: NewChangeEvent[] = [...byModule.values()].map((data) => ({
          type: 'module.members_changed',
          data,
        }));
        if (events.length > 0) await this.changeEvents.record(transaction, events);
        return rows.length;
      });
      total += marked;
      if (marked < BATCH) return total;
    }
  }
}
