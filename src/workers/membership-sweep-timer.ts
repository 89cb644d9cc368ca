import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { MembershipSweep } from '../course-modules/membership/membership-sweep.js';

/**
 * Runs the membership sweep ({@link MembershipSweep.sweep}) at start and then every MEMBERSHIP_SWEEP_INTERVAL_MS;
 * shutdown waits for a round in progress.
 */
@Injectable()
export class MembershipSweepTimer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MembershipSweep.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  /** Rounds this replica has finished (whether or not it held the sweep): what a test waits on. */
  rounds = 0;

  constructor(
    private readonly sweep: MembershipSweep,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
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
    this.running = this.sweep
      .sweep()
      .catch((error: unknown) => this.logger.warn('Membership sweep failed', error))
      .finally(() => {
        this.rounds++;
        this.running = undefined;
      });
  }
}
