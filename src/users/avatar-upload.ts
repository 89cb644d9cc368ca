import { Readable } from 'node:stream';
import { type Multipart } from '@fastify/multipart';
import { AppError } from '../core/errors.js';
import { type ImageType, SNIFF_BYTES, sniffImageType } from './image-type.js';
import {
  FileTooLarge,
  MalformedMultipart,
  NoFileUploaded,
  TooManyFiles,
  TooManyParts,
  UnsupportedFileType,
} from './users.errors.js';

/** The field name of the avatar part. */
export const AVATAR_FIELD = 'file';

/** A file stream as busboy hands it over: `truncated` once it passed the configured size limit. */
type FileStream = Readable & { truncated?: boolean };

/**
 * Reads a multipart body part by part and streams the one `file` part into `store` (which writes it
 * atomically), while the first bytes tell its type. Nothing beyond the size limit is held: busboy discards it and
 * marks the stream truncated. Every part is read to the end so the connection stays usable, then the first
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
  let fileParts = 0;
  let outcome: ImageType | AppError | undefined;
  const iterator = parts[Symbol.asyncIterator]();
  try {
    for (let next = await parsed(iterator); !next.done; next = await parsed(iterator)) {
      const part = next.value;
      if (part.type !== 'file') continue;
      fileParts++;
      if (part.fieldname !== AVATAR_FIELD || outcome !== undefined) {
        await drain(part.file);
        continue;
      }
      outcome = await receiveImage(part.file, store);
      if (!(outcome instanceof AppError)) onStored();
    }
  } catch (error) {
    throw error instanceof ParseFailure ? error.toContractError() : error;
  }
  if (outcome === undefined) throw new NoFileUploaded();
  if (fileParts > 1) throw new TooManyFiles();
  if (outcome instanceof AppError) throw outcome;
  return outcome;
}

async function receiveImage(
  file: FileStream,
  store: (source: Readable) => Promise<void>,
): Promise<ImageType | AppError> {
  const chunks = file[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head: Buffer[] = [];
  let headLength = 0;
  while (headLength < SNIFF_BYTES) {
    const next = await parsed(chunks);
    if (next.done) break;
    head.push(next.value);
    headLength += next.value.length;
  }
  const type = sniffImageType(Buffer.concat(head));
  if (!type) {
    while (!(await parsed(chunks)).done);
    return new UnsupportedFileType();
  }
  async function* bytes(): AsyncGenerator<Buffer> {
    yield* head;
    for (let next = await parsed(chunks); !next.done; next = await parsed(chunks)) yield next.value;
    // Failing the stream makes the storage write remove its temporary file.
    if (file.truncated) throw new FileTooLarge();
  }
  try {
    await store(Readable.from(bytes(), { objectMode: false }));
  } catch (error) {
    if (error instanceof FileTooLarge) return error;
    throw error;
  }
  return type;
}

async function drain(file: Readable): Promise<void> {
  const chunks = file[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  while (!(await parsed(chunks)).done);
}

/** An error of @fastify/multipart or busboy while reading the body, told apart from storage failures. */
class ParseFailure extends Error {
  constructor(readonly reason: unknown) {
    super('multipart parse failure');
  }

  toContractError(): AppError {
    const code = (this.reason as { code?: unknown } | null)?.code;
    if (code === 'FST_FILES_LIMIT') return new TooManyFiles();
    if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return new TooManyParts();
    // Busboy's own errors (no boundary, a truncated part) and a client that went away mid-body.
    return new MalformedMultipart();
  }
}

async function parsed<T>(iterator: AsyncIterator<T>): Promise<IteratorResult<T>> {
  try {
    return await iterator.next();
  } catch (error) {
    throw error instanceof ParseFailure ? error : new ParseFailure(error);
  }
}
