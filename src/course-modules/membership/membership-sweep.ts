import { Injectable } from '@nestjs/common';
import { Transactions } from '../../database/transactions.js';
import { type MembersChanged, type NewChangeEvent } from '../../events/change-event-types.js';
import { ChangeEventsService } from '../../events/change-events.service.js';
import { membersChange } from './membership-changes.js';
import { ModuleRolesRepository } from './module-roles.repository.js';

/** Rows marked per transaction; a sweep with more goes on in further transactions at once. */
const BATCH = 10_000;

/**
 * The time-based events of the membership lifecycle (docs/api.md §15, docs/decisions.md): every
 * MEMBERSHIP_SWEEP_INTERVAL_MS each replica tries to sweep (its timer: src/workers/membership-sweep-timer.ts); the
 * one that takes the advisory lock finds the memberships whose `starts_at` or `ends_at` has passed since their
 * effective status was last reported, writes one `module.members_changed` event per module with their new
 * effective statuses (`effective`) and marks them reported, in one transaction. Replicas that do not get the lock
 * skip that round; a row is marked under its row lock, so even two sweeps at once could not report it twice. An
 * event follows its date by at most one interval plus the sweep's own time.
 */
@Injectable()
export class MembershipSweep {
  constructor(
    private readonly transactions: Transactions,
    private readonly roles: ModuleRolesRepository,
    private readonly changeEvents: ChangeEventsService,
  ) {}

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
