import { type Readable } from 'node:stream';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { INT64_MAX } from '../core/ids.js';
import { type AppConfig } from '../config/app-config.js';
import { type FileStore, type StoredFile, type StoredFileInfo } from './file-store.js';
import { LocalFileStore } from './local-file-store.js';

const KEY_PATTERN = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9._-]+)*$/;
/** A per-record folder name: a positive `bigint` id written canonically (`modules/12`, `avatars/7`). */
const ID_FOLDER = /^[1-9][0-9]{0,18}$/;
const isIdFolder = (name: string) => ID_FOLDER.test(name) && BigInt(name) <= INT64_MAX;
/** Per-record folders a start-up sweep looks up in one query. */
const SWEEP_BATCH = 1000;

/** `items` in slices of `size`: the batches of the start-up sweeps. */
function* inBatches<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}

/** Injection token of the {@link FileStore} the settings choose. */
export const FILE_STORE = Symbol('FILE_STORE');

/**
 * The file store the settings choose: an S3 bucket when STORAGE_S3_BUCKET is set, else STORAGE_DIR. The AWS SDK
 * is imported only then: loaded, it holds about 25 MiB that a service on local storage never uses.
 */
export async function createFileStore(config: Pick<AppConfig, 's3' | 'storageDir'>): Promise<FileStore> {
  if (!config.s3) return new LocalFileStore(config.storageDir);
  const { S3FileStore } = await import('./s3-file-store.js');
  return new S3FileStore(config.s3);
}

/**
 * Files addressed by keys such as `modules/12/<uuid>` or `avatars/7/<uuid>`, in whichever {@link FileStore}
 * the settings choose. Keys are made by the service, never taken from a client; each is checked here.
 */
@Injectable()
export class StorageService implements OnApplicationShutdown {
  constructor(@Inject(FILE_STORE) readonly store: FileStore) {}

  /** Throws for a key outside the naming scheme (the async methods reject instead). */
  private check(key: string): string {
    if (!KEY_PATTERN.test(key) || key.split('/').includes('..'))
      throw new Error(`Invalid storage key ${key}`);
    return key;
  }

  /** Stores `source` under `key` atomically; a failed write leaves nothing behind. */
  async write(key: string, source: Readable | Buffer): Promise<void> {
    const checked = this.check(key);
    return await this.store.write(checked, source);
  }

  /** Removes a file or a whole folder of keys (`modules/12`); missing ones are fine. */
  async remove(key: string): Promise<void> {
    const checked = this.check(key);
    return await this.store.remove(checked);
  }

  /** The names directly under a folder key, or none when it does not exist. */
  async list(folder: string): Promise<string[]> {
    const checked = this.check(folder);
    return await this.store.list(checked);
  }

  /** Size and modification time, or null when the file does not exist. */
  async stat(key: string): Promise<StoredFileInfo | null> {
    const checked = this.check(key);
    return await this.store.stat(checked);
  }

  /** The file's bytes as a stream. */
  open(key: string): Readable {
    return this.store.open(this.check(key));
  }

  /**
   * The per-record folders under `folder` (names that are ids), in batches, for the start-up sweeps that
   * remove the files of records deleted while the process was down.
   */
  async *idFolderBatches(folder: string, size = SWEEP_BATCH): AsyncGenerator<string[]> {
    yield* inBatches((await this.list(folder)).filter(isIdFolder), size);
  }

  /**
   * The same batches with every file of each folder (`avatars/7/…` under `7`), from one listing of the store
   * (one paged listing on S3, not one per record); files outside such folders are left out.
   */
  async *idFolderFileBatches(folder: string, size = SWEEP_BATCH): AsyncGenerator<[string, StoredFile[]][]> {
    const checked = this.check(folder);
    const groups = new Map<string, StoredFile[]>();
    for (const file of await this.store.listFiles(checked)) {
      const name = file.key.slice(checked.length + 1).split('/')[0];
      if (!isIdFolder(name) || !KEY_PATTERN.test(file.key)) continue;
      groups.set(name, [...(groups.get(name) ?? []), file]);
    }
    yield* inBatches([...groups], size);
  }

  /** Removes temporary files left by writes a crash interrupted. */
  clearTemporary(): Promise<void> {
    return this.store.clearTemporary();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
