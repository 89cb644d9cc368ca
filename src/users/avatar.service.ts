import { randomUUID } from 'node:crypto';
import { type Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type Multipart } from '@fastify/multipart';
import { DataSource } from 'typeorm';
import { StorageService } from '../storage/storage.service.js';
import { avatarFolder } from './avatar-files.js';
import { receiveAvatar } from './avatar-upload.js';
import { fromUserRow, USER_COLUMNS, type UserRow } from './user-row.js';
import { toUserSummary, type UserSummary } from './user.mapper.js';
import { AvatarNotFound, UserNotFound } from './users.errors.js';

export interface StoredAvatar {
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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly storage: StorageService,
  ) {}

  /**
   * Streams the upload to a new key, points the user at it, then removes the previous file. A failed upload
   * removes what it wrote, so the previous avatar stays in place. `openParts` starts reading the body; it is
   * called only once the user is known to exist.
   */
  async upload(userId: string, openParts: () => AsyncIterable<Multipart>): Promise<UserSummary> {
    await this.requireUser(userId);
    const key = `${avatarFolder(userId)}/${randomUUID()}`;
    let stored = false;
    try {
      const contentType = await receiveAvatar(
        openParts(),
        (source) => this.storage.write(key, source),
        () => (stored = true),
      );
      const [rows] = await this.dataSource.query<[(UserRow & { previous: string | null })[], number]>(
        `UPDATE users u SET avatar_key = $2, avatar_content_type = $3, updated_at = $4
         FROM (SELECT id, avatar_key FROM users WHERE id = $1 FOR UPDATE) previous
         WHERE u.id = previous.id
         RETURNING ${USER_COLUMNS}, previous.avatar_key AS previous`,
        [userId, key, contentType, new Date()],
      );
      if (rows.length === 0) throw new UserNotFound();
      const [row] = rows;
      if (row.previous) await this.removeQuietly(row.previous);
      return toUserSummary(fromUserRow(row));
    } catch (error) {
      if (stored) await this.removeQuietly(key);
      throw error;
    }
  }

  async find(userId: string): Promise<StoredAvatar> {
    const [row] = await this.dataSource.query<
      { avatar_key: string | null; avatar_content_type: string | null }[]
    >(`SELECT avatar_key, avatar_content_type FROM users WHERE id = $1`, [userId]);
    if (!row) throw new UserNotFound();
    if (!row.avatar_key || !row.avatar_content_type) throw new AvatarNotFound();
    const key = row.avatar_key;
    const file = await this.storage.stat(key);
    if (!file) {
      this.logger.warn(`The avatar file of user ${userId} is missing from storage`);
      throw new AvatarNotFound();
    }
    return {
      contentType: row.avatar_content_type,
      etag: `"${key.split('/').at(-1)}"`,
      size: file.size,
      open: () => this.storage.open(key),
    };
  }

  private async requireUser(id: string): Promise<void> {
    const rows = await this.dataSource.query<unknown[]>(`SELECT 1 FROM users WHERE id = $1`, [id]);
    if (rows.length === 0) throw new UserNotFound();
  }

  private async removeQuietly(key: string): Promise<void> {
    await this.storage.remove(key).catch((error: unknown) => {
      this.logger.warn(`Could not remove avatar file ${key}: ${String(error)}`);
    });
  }
}
