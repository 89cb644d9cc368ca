import { type Readable } from 'node:stream';
import { type AppError } from '../core/errors.js';
import { MalformedMultipart, NoFileUploaded, TooManyFiles, TooManyParts } from './upload.errors.js';

/** The name of the multipart part that carries an upload's file. */
const FILE_FIELD = 'file';

/** A part as @fastify/multipart hands it over: a file (with its stream) or a text field. */
type Part = { type: 'file'; fieldname: string; file: Readable } | { type: 'field'; fieldname: string };

/** The file part handed to the reader's callback. */
export interface FilePart {
  /** The file's bytes; a failure of the body itself surfaces here and is answered by {@link readOneFilePart}. */
  chunks: AsyncIterableIterator<Buffer>;
  /** Whether busboy cut the file at the configured size limit (what passed it was discarded). */
  truncated(): boolean;
}

/**
 * Reads a multipart body part by part and hands the one file part named `file` to `read`. Every other part is
 * read to its end (and discarded) so the connection stays usable; then the first problem is reported in this
 * order: no `file` part (400 `No file uploaded`; a text field named `file` is not a file), more than one file
 * part, whatever their names (400 `Only one file may be uploaded`). A body that does not parse (no boundary, a
 * truncated part, a client gone) is 400 `Malformed multipart body`, and more parts than the limit 413
 * `Request body too large`. What `read` throws passes through as it is, and stops the reading there.
 */
export async function readOneFilePart<T>(
  parts: AsyncIterable<Part>,
  read: (file: FilePart) => Promise<T>,
): Promise<T> {
  let fileParts = 0;
  let result: { value: T } | undefined;
  const iterator = parts[Symbol.asyncIterator]();
  try {
    for (let next = await parsed(iterator); !next.done; next = await parsed(iterator)) {
      const part = next.value;
      if (part.type !== 'file') continue;
      fileParts++;
      const chunks = fileChunks(part.file);
      if (part.fieldname !== FILE_FIELD || result !== undefined) {
        while (!(await chunks.next()).done);
        continue;
      }
      const file = part.file as Readable & { truncated?: boolean };
      result = { value: await read({ chunks, truncated: () => file.truncated === true }) };
    }
  } catch (error) {
    throw error instanceof ParseFailure ? error.toContractError() : error;
  }
  if (result === undefined) throw new NoFileUploaded();
  if (fileParts > 1) throw new TooManyFiles();
  return result.value;
}

/** The chunks of a file part, its failures told apart from those of whoever reads it. */
function fileChunks(file: Readable): AsyncIterableIterator<Buffer> {
  const chunks = file[Symbol.asyncIterator]() as AsyncIterableIterator<Buffer>;
  return {
    next: () => parsed(chunks),
    // Leaving a `for await` early ends the stream, as it would without this wrapper.
    return: (value?: unknown) => chunks.return!(value),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
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
