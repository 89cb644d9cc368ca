import { type Readable } from 'node:stream';

/**
 * A temporary file, or a stored one no record points at yet, younger than this may belong to an upload in flight,
 * here or in another replica: the start-up cleanups leave it.
 */
export const UPLOAD_GRACE_MS = 60 * 60 * 1000;

export interface StoredFileInfo {
  size: number;
  /** Milliseconds since the epoch of the last write. */
  modifiedAt: number;
}

/** A file found by {@link FileStore.listFiles}. */
export interface StoredFile {
  key: string;
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
  /**
   * Every file under a folder key, at any depth, with its modification time: one listing (paged on S3), for the
   * start-up sweeps, which must not ask the store once per record.
   */
  listFiles(folder: string): Promise<StoredFile[]>;
  /** Size and modification time of a file, or null when it does not exist. */
  stat(key: string): Promise<StoredFileInfo | null>;
  /** A stream of the file's bytes; a missing file makes the stream fail. */
  open(key: string): Readable;
  /**
   * Removes what writes a crash interrupted (temporary files older than {@link UPLOAD_GRACE_MS}: younger
   * ones may be uploads in flight in another replica sharing the store); run once at start.
   */
  clearTemporary(): Promise<void>;
  /** Releases connections at shutdown. */
  close(): Promise<void>;
}
