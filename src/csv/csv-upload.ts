import { type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { applyDecorators, Injectable, type NestMiddleware } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiBody, ApiConsumes, ApiQuery } from '@nestjs/swagger';
import { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AppError, ValidationFailed } from '../core/errors.js';
import { type QueryReader } from '../core/query.js';
import { type CsvRow, readCsv } from './csv-reader.js';
import { CSV_MAX_BYTES, ImportFileTooLarge } from './csv.errors.js';

/** The multipart part that carries the file. */
export const CSV_FILE_FIELD = 'file';

class UnsupportedContentType extends AppError {
  constructor() {
    super(415, 'Unsupported content type');
  }
}

const mediaType = (header: string | undefined) => header?.split(';', 1)[0].trim().toLowerCase();

/** Whether a Content-Type is one an import accepts: `text/csv` or `multipart/form-data`. */
export function isCsvUploadType(header: string | undefined): boolean {
  const type = mediaType(header);
  return type === 'text/csv' || type === 'multipart/form-data';
}

/**
 * Marks a route as a CSV import (its `text/csv` body is handed over as a stream) and documents its body.
 * `columns` is an example file.
 */
export const CsvUpload = (example: string) =>
  applyDecorators(
    RouteConfig({ csvUpload: true }),
    ApiConsumes('text/csv', 'multipart/form-data'),
    ApiBody({
      required: true,
      description: `A CSV file (UTF-8; \`,\` or \`;\`; at most ${CSV_MAX_BYTES} bytes and 10000 rows), as the body or as the multipart part \`file\`.`,
      schema: { type: 'string', format: 'binary', example },
    }),
  );

/** Documents an import's `dry_run` query parameter, read by {@link readDryRun}. */
export const ApiDryRunQuery = () =>
  ApiQuery({
    name: 'dry_run',
    required: false,
    description: 'Check and answer per row without changing anything.',
    schema: { type: 'boolean', default: false },
  });

/** An import's `dry_run` (`true`/`false`, default false; else `dry_run must be true or false`). */
export function readDryRun(reader: QueryReader): boolean {
  return reader.boolean('dry_run') ?? false;
}

/**
 * `text/csv` is not buffered: the raw request stream becomes the body of routes marked with {@link CsvUpload},
 * read and bounded by {@link readCsv}; a declared length over the limit is refused at once. Every other
 * route keeps answering 415 to it.
 */
export function registerCsvBodyParser(fastify: FastifyInstance): void {
  fastify.addContentTypeParser('text/csv', (request, payload, done) => {
    const config = request.routeOptions.config as { csvUpload?: boolean } | undefined;
    if (config?.csvUpload !== true) {
      done(new UnsupportedContentType(), undefined);
      return;
    }
    if (Number(request.headers['content-length'] ?? 0) > CSV_MAX_BYTES) {
      done(new ImportFileTooLarge(), undefined);
      return;
    }
    done(null, payload);
  });
}

/**
 * Import routes take CSV or multipart only. As middleware it runs before the guards, so another content type is
 * answered 415 before authentication, as the framing of the body is (docs/api.md §1, step 0).
 */
@Injectable()
export class CsvUploadOnlyMiddleware implements NestMiddleware {
  use(request: IncomingMessage, _response: ServerResponse, next: (error?: unknown) => void): void {
    next(isCsvUploadType(request.headers['content-type']) ? undefined : new UnsupportedContentType());
  }
}

type MultipartRequest = FastifyRequest & {
  isMultipart(): boolean;
  parts(options?: {
    limits?: { fileSize?: number; files?: number };
  }): AsyncIterableIterator<
    { type: 'file'; fieldname: string; file: Readable } | { type: 'field'; fieldname: string }
  >;
};

/**
 * Hands the uploaded CSV bytes to `read`: the body of a `text/csv` request, or the part named `file` of a
 * multipart one (400 `No file uploaded` without it, `Only one file may be uploaded` with more).
 */
export async function withCsvUpload<T>(
  request: FastifyRequest,
  read: (source: AsyncIterable<Buffer>) => Promise<T>,
): Promise<T> {
  const multipart = request as MultipartRequest;
  if (!multipart.isMultipart()) {
    const body = request.body;
    // Not destroyed when reading stops early (a limit): Node then discards the rest of the body itself.
    return read(body instanceof Readable ? body.iterator({ destroyOnReturn: false }) : Readable.from([]));
  }
  let result: { value: T } | undefined;
  let files = 0;
  try {
    // One byte over the limit is kept so the reader can tell "too large" from "exactly the limit".
    for await (const part of multipart.parts({ limits: { fileSize: CSV_MAX_BYTES + 1, files: 2 } })) {
      if (part.type !== 'file') continue;
      files++;
      if (part.fieldname !== CSV_FILE_FIELD || result !== undefined) {
        part.file.resume();
        await new Promise((resolve) => part.file.once('end', resolve));
        continue;
      }
      result = { value: await read(part.file) };
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'FST_FILES_LIMIT') throw new ValidationFailed('Only one file may be uploaded');
    throw new ValidationFailed('Malformed multipart body');
  }
  if (result === undefined) throw new ValidationFailed('No file uploaded');
  if (files > 1) throw new ValidationFailed('Only one file may be uploaded');
  return result.value;
}

/** The rows of the uploaded CSV (a `text/csv` body or the multipart part `file`), read by {@link readCsv}. */
export async function readCsvUpload<R extends string, O extends string = never>(
  request: FastifyRequest,
  reply: FastifyReply,
  required: readonly R[],
  optional: readonly O[] = [],
): Promise<CsvRow<R | O>[]> {
  try {
    return await withCsvUpload(request, (source) => readCsv(source, required, optional));
  } catch (error) {
    // A body refused before its end is not read further: the connection closes after the answer.
    if (!request.raw.readableEnded) void reply.header('connection', 'close');
    throw error;
  }
}
