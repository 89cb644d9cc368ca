import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type FileStore, type StoredFile, type StoredFileInfo, UPLOAD_GRACE_MS } from './file-store.js';

/**
 * Files in a local directory (one disk, or a volume every replica mounts). Writes go to a temporary file
 * first and are renamed into place, so a reader never sees a partial file.
 */
export class LocalFileStore implements FileStore {
  private readonly tmpDir: string;

  constructor(readonly root: string) {
    this.tmpDir = path.join(root, '.tmp');
  }

  private pathOf(key: string): string {
    return path.join(this.root, key);
  }

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

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { recursive: true, force: true });
  }

  async list(folder: string): Promise<string[]> {
    try {
      return await readdir(this.pathOf(folder));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return [];
      throw error;
    }
  }

  async listFiles(folder: string): Promise<StoredFile[]> {
    let entries;
    try {
      entries = await readdir(this.pathOf(folder), { recursive: true, withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return [];
      throw error;
    }
    const files: StoredFile[] = [];
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const full = path.join(entry.parentPath, entry.name);
      const info = await stat(full).catch(() => null);
      if (info)
        files.push({
          key: path.relative(this.root, full).split(path.sep).join('/'),
          modifiedAt: info.mtimeMs,
        });
    }
    return files;
  }

  async stat(key: string): Promise<StoredFileInfo | null> {
    try {
      const info = await stat(this.pathOf(key));
      return info.isFile() ? { size: info.size, modifiedAt: info.mtimeMs } : null;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw error;
    }
  }

  open(key: string): Readable {
    return createReadStream(this.pathOf(key));
  }

  async clearTemporary(now = Date.now()): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.tmpDir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const name of names) {
      const file = path.join(this.tmpDir, name);
      const info = await stat(file).catch(() => null);
      if (info && now - info.mtimeMs >= UPLOAD_GRACE_MS) await rm(file, { recursive: true, force: true });
    }
  }

  async close(): Promise<void> {}
}
