import { randomUUID } from 'node:crypto';
import { type Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import { type Multipart } from '@fastify/multipart';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { Transactions } from '../database/transactions.js';
import { ChangeEventsService } from '../events/change-events.service.js';
import { StorageService } from '../storage/storage.service.js';
import { avatarFolder } from './avatar-files.js';
import { receiveAvatar } from './avatar-upload.js';
import { toUserAccount } from './user.mapper.js';
import { type UserAccount } from './user.shape.js';
import { AvatarNotFound, UserNotFound } from './users.errors.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

interface StoredAvatar {
  contentType: string;
  /** A strong validator: every upload gets a fresh storage key. */
  etag: string;
  size: number;
  open(): Readable;
}

@Injectable()
export class AvatarService {
  private readonly logger = new Logger(AvatarService.name);

  constructor(
    private readonly users: UsersRepository,
    private readonly writer: UsersService,
    private readonly storage: StorageService,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly changeEvents: ChangeEventsService,
  ) {}

  /**
   * Streams the upload to a new key, points the user at it, then removes the previous file. A failed upload
   * removes what it wrote, so the previous avatar stays in place. `openParts` starts reading the body; it is
   * called only once the user is known to exist.
   */
  async upload(
    userId: string,
    openParts: () => AsyncIterable<Multipart>,
    context: RequestContext,
  ): Promise<UserAccount> {
    if (!(await this.users.exists(userId))) throw new UserNotFound();
    const key = `${avatarFolder(userId)}/${randomUUID()}`;
    let stored = false;
    // Set once the transaction's work is done: a failure after that came from COMMIT, whose outcome is unknown.
    let committing = false;
    try {
      const contentType = await receiveAvatar(
        openParts(),
        (source) => this.storage.write(key, source),
        () => (stored = true),
      );
      const size = (await this.storage.stat(key))?.size ?? 0;
      const row = await this.transactions.run(async (transaction) => {
        const updated = await this.writer.replaceAvatar(userId, key, contentType, transaction);
        if (!updated) throw new UserNotFound();
        await this.audit.record(transaction, context, {
          action: 'user.avatar',
          targetType: 'user',
          targetIds: [userId],
          summary: { content_type: contentType, size },
        });
        await this.changeEvents.record(transaction, [{ type: 'user.updated', data: toUserAccount(updated) }]);
        committing = true;
        return updated;
      });
      if (row.previous) await this.removeQuietly(row.previous);
      return toUserAccount(row);
    } catch (error) {
      // When COMMIT itself failed (the connection was lost), the user may already point at the new file: it is
      // kept, and the sweep at the next start removes it if the commit did not happen.
      if (stored && !committing) await this.removeQuietly(key);
      throw error;
    }
  }

  async find(userId: string): Promise<StoredAvatar> {
    const row = await this.users.avatarOf(userId);
    if (!row) throw new UserNotFound();
    if (!row.avatarKey || !row.avatarContentType) throw new AvatarNotFound();
    const key = row.avatarKey;
    const file = await this.storage.stat(key);
    if (!file) {
      this.logger.warn(`The avatar file of user ${userId} is missing from storage`);
      throw new AvatarNotFound();
    }
    return {
      contentType: row.avatarContentType,
      etag: `"${key.split('/').at(-1)}"`,
      size: file.size,
      open: () => this.storage.open(key),
    };
  }

  private async removeQuietly(key: string): Promise<void> {
    await this.storage.remove(key).catch((error: unknown) => {
      this.logger.warn(`Could not remove avatar file ${key}`, error);
    });
  }
}
