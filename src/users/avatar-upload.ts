import { Readable } from 'node:stream';
import { type Multipart } from '@fastify/multipart';
import { AppError } from '../core/errors.js';
import { type FilePart, readOneFilePart } from '../uploads/one-file-part.js';
import { readHead } from '../uploads/read-head.js';
import { type ImageType, SNIFF_BYTES, sniffImageType } from './image-type.js';
import { FileTooLarge, UnsupportedFileType } from './users.errors.js';

/**
 * Reads a multipart body with {@link readOneFilePart} and streams the one `file` part into `store` (which writes
 * it atomically), while the first bytes tell its type. Nothing beyond the size limit is held: busboy discards it
 * and marks the stream truncated. Every part is read to the end so the connection stays usable, then the first
 * problem is reported in this order: no `file` part, more than one file part, not an image, too large.
 *
 * Returns the image type once `store` has completed; `store` must remove what it wrote if this then throws
 * (`onStored` tells the caller there is something to remove).
 */
export async function receiveAvatar(
  parts: AsyncIterable<Multipart>,
  store: (source: Readable) => Promise<void>,
  onStored: () => void,
): Promise<ImageType> {
  const outcome = await readOneFilePart(parts, async (file) => {
    const received = await receiveImage(file, store);
    if (!(received instanceof AppError)) onStored();
    return received;
  });
  if (outcome instanceof AppError) throw outcome;
  return outcome;
}

async function receiveImage(
  file: FilePart,
  store: (source: Readable) => Promise<void>,
): Promise<ImageType | AppError> {
  const { chunks } = file;
  const head = await readHead(chunks, SNIFF_BYTES);
  const type = sniffImageType(head);
  if (!type) {
    while (!(await chunks.next()).done);
    return new UnsupportedFileType();
  }
  async function* bytes(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    // Failing the stream makes the storage write remove its temporary file.
    if (file.truncated()) throw new FileTooLarge();
  }
  try {
    await store(Readable.from(bytes(), { objectMode: false }));
  } catch (error) {
    if (error instanceof FileTooLarge) return error;
    throw error;
  }
  return type;
}
