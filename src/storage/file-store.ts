import { type Readable } from 'node:stream';

export interface StoredFileInfo {
  size: number;
  /** Milliseconds since the epoch of the last write. */
  modifiedAt: number;
}

/**
 * Where the service keeps files, addressed by keys such as `avatars/7/<uuid>`; a key's `/`-separated parents
 * act as folders. Two implementations: a local directory ({@link LocalFileStore}) and an S3-compatible bucket
 * ({@link S3FileStore}). Keys are checked by {@link StorageService} before they get here.
 */
export interface FileStore {
  /** Stores `source` under `key` atomically: a reader sees the whole file or none of it, never a part. */
  write(key: string, source: Readable | Buffer): Promise<void>;
  /** Removes a file, or every file under a folder key (`modules/12`); missing ones are fine. */
  remove(key: string): Promise<void>;
  /** The names directly under a folder key (files and sub-folders), or none when it does not exist. */
  list(folder: string): Promise<string[]>;
  /** Size and modification time of a file, or null when it does not exist. */
  stat(key: string): Promise<StoredFileInfo | null>;
  /** A stream of the file's bytes; a missing file makes the stream fail. */
  open(key: string): Readable;
  /** Removes what writes a crash interrupted (temporary files); run once at start. */
  clearTemporary(): Promise<void>;
  /** Releases connections at shutdown. */
  close(): Promise<void>;
}
