import { Injectable } from '@nestjs/common';
import { UPLOAD_GRACE_MS } from '../storage/file-store.js';
import { StorageService } from '../storage/storage.service.js';
import { UserBulkRepository } from './user-bulk.repository.js';

const AVATARS_FOLDER = 'avatars';

/** The storage folder of a user's avatar files: `avatars/<user id>`. */
export const avatarFolder = (userId: number | string) => `${AVATARS_FOLDER}/${userId}`;

/**
 * Avatar files left behind when the process stopped between a database change and the file operation that
 * follows it (a new file not yet recorded, an old one not yet removed, a deleted user's folder). The sweep at
 * start (src/workers/start-up-sweeps.ts) removes them.
 */
@Injectable()
export class AvatarFiles {
  constructor(
    private readonly storage: StorageService,
    private readonly users: UserBulkRepository,
  ) {}

  /**
   * Removes the folders of users that no longer exist, and the files of existing users other than their current
   * avatar once older than {@link UPLOAD_GRACE_MS} (younger ones may belong to an upload in flight). Returns the
   * keys removed.
   */
  async sweep(now = Date.now()): Promise<string[]> {
    const removed: string[] = [];
    // One listing of every avatar file: asking the store once per user would take minutes on S3.
    for await (const batch of this.storage.idFolderFileBatches(AVATARS_FOLDER)) {
      const current = await this.users.avatarKeys(batch.map(([name]) => name));
      for (const [name, files] of batch) {
        const folder = avatarFolder(name);
        if (!current.has(name)) {
          await this.storage.remove(folder);
          removed.push(folder);
          continue;
        }
        for (const file of files) {
          if (file.key === current.get(name) || now - file.modifiedAt < UPLOAD_GRACE_MS) continue;
          await this.storage.remove(file.key);
          removed.push(file.key);
        }
      }
    }
    return removed;
  }
}
