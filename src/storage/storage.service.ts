import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import { INT64_MAX } from '../core/ids.js';
import { type AppConfig } from '../config/app-config.js';

const KEY_PATTERN = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9._-]+)*$/;
/** A per-record folder name: a positive `bigint` id written canonically (`modules/12`, `avatars/7`). */
const ID_FOLDER = /^[1-9][0-9]{0,18}$/;

/**
 * Files on local disk under STORAGE_DIR, addressed by keys such as `modules/12/<uuid>` or `avatars/7/<uuid>`.
 * Writes go to a temporary file first and are renamed into place, so a reader never sees a partial file.
 */
@Injectable()
export class StorageService {
  readonly root: string;
  private readonly tmpDir: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.root = config.storageDir;
    this.tmpDir = path.join(this.root, '.tmp');
  }

  /** The absolute path of a key; keys are made by the service, never taken from a client. */
  pathOf(key: string): string {
    if (!KEY_PATTERN.test(key) || key.split('/').includes('..'))
      throw new Error(`Invalid storage key ${key}`);
    return path.join(this.root, key);
  }

  /** Streams `source` into `key` atomically; on any error the partial temporary file is removed. */
  async write(key: string, source: Readable | Buffer): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(this.tmpDir, { recursive: true });
    await mkdir(path.dirname(target), { recursive: true });
    const temporary = path.join(this.tmpDir, randomUUID());
    try {
      if (Buffer.isBuffer(source)) await writeFile(temporary, source, { mode: 0o640 });
      else await pipeline(source, createWriteStream(temporary, { mode: 0o640 }));
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  /** Removes a file or a whole folder of keys (`modules/12`); missing ones are fine. */
  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { recursive: true, force: true });
  }

  /** The names directly under a folder key, or none when it does not exist. */
  async list(folder: string): Promise<string[]> {
    try {
      return await readdir(this.pathOf(folder));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  /**
   * The per-record folders under `folder` (names that are ids), in batches, for the start-up sweeps that
   * remove the files of records deleted while the process was down.
   */
  async *idFolderBatches(folder: string, size = 1000): AsyncGenerator<string[]> {
    const names = (await this.list(folder)).filter(
      (name) => ID_FOLDER.test(name) && BigInt(name) <= INT64_MAX,
    );
    for (let start = 0; start < names.length; start += size) yield names.slice(start, start + size);
  }

  /** Removes temporary files left by writes a crash interrupted. */
  async clearTemporary(): Promise<void> {
    await rm(this.tmpDir, { recursive: true, force: true });
  }
}
