import { Injectable, Logger } from '@nestjs/common';
import { StorageService } from '../../storage/storage.service.js';
import { CourseModulesRepository } from './course-modules.repository.js';

const MODULES_FOLDER = 'modules';
/** Storage removals in flight at once when a delete removes many folders. */
const REMOVALS_AT_ONCE = 16;

/** The storage folder of a module's files: every file of module 12 lives under `modules/12/`. */
const moduleFolder = (moduleId: number | string) => `${MODULES_FOLDER}/${moduleId}`;

/**
 * A module's files in storage. They are removed after the deleting transaction commits; should the process
 * stop in between, the sweep at the next start (src/workers/start-up-sweeps.ts) removes folders whose module no
 * longer exists.
 */
@Injectable()
export class ModuleFiles {
  private readonly logger = new Logger(ModuleFiles.name);

  constructor(
    private readonly storage: StorageService,
    private readonly modules: CourseModulesRepository,
  ) {}

  /**
   * Removes the folders of deleted modules, and any file record's key that lay outside them. Failures are
   * logged, not thrown: the rows are gone already, and the next start's sweep retries the folders.
   */
  async removeDeleted(moduleIds: readonly string[], storageKeys: readonly string[]): Promise<void> {
    const folders = moduleIds.map(moduleFolder);
    const folderSet = new Set(folders);
    const strays = storageKeys.filter((key) => !folderSet.has(key.split('/', 2).join('/')));
    const keys = [...folders, ...strays];
    // A bulk delete removes up to a thousand folders: a few at a time, not one after another.
    let next = 0;
    const worker = async () => {
      while (next < keys.length) {
        const key = keys[next++];
        try {
          await this.storage.remove(key);
        } catch (error) {
          this.logger.warn(`Could not remove ${key} from storage`, error);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(REMOVALS_AT_ONCE, keys.length) }, worker));
  }

  /** Removes `modules/<id>` folders whose module no longer exists. Returns the ids swept. */
  async sweep(): Promise<string[]> {
    const orphans: string[] = [];
    for await (const batch of this.storage.idFolderBatches(MODULES_FOLDER)) {
      const existing = await this.modules.existingIds(batch);
      orphans.push(...batch.filter((name) => !existing.has(name)));
    }
    for (const id of orphans) await this.storage.remove(moduleFolder(id));
    return orphans;
  }
}
