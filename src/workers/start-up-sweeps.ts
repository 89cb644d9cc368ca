import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ModuleFiles } from '../course-modules/modules/module-files.js';
import { AvatarFiles } from '../users/avatar-files.js';

/**
 * The sweeps of stray files at start, before the service listens: the avatar files and the module folders a
 * process left behind when it stopped between a database change and the file operation after it. A sweep that
 * fails is logged: leftover files only take space until the next start, and must not keep the service from
 * starting.
 */
@Injectable()
export class StartUpSweeps implements OnApplicationBootstrap {
  constructor(
    private readonly avatarFiles: AvatarFiles,
    private readonly moduleFiles: ModuleFiles,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.sweepAvatars();
    await this.sweepModuleFiles();
  }

  /** {@link AvatarFiles.sweep}, logged. */
  async sweepAvatars(): Promise<void> {
    const logger = new Logger(AvatarFiles.name);
    try {
      const removed = await this.avatarFiles.sweep();
      if (removed.length > 0) logger.log(`Removed ${removed.length} stray avatar files or folders`);
    } catch (error) {
      logger.warn('Sweep of stray avatar files failed', error);
    }
  }

  /** {@link ModuleFiles.sweep}, logged. */
  async sweepModuleFiles(): Promise<void> {
    const logger = new Logger(ModuleFiles.name);
    try {
      const swept = await this.moduleFiles.sweep();
      if (swept.length > 0) logger.log(`Removed files of ${swept.length} deleted modules`);
    } catch (error) {
      logger.warn("Sweep of deleted modules' files failed", error);
    }
  }
}
