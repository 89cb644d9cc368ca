import { Readable } from 'node:stream';
import { applyDecorators } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiBody, ApiConsumes, ApiQuery } from '@nestjs/swagger';
import { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { type QueryReader } from '../core/query.js';
import { contentTypeOnly } from '../uploads/content-type-only.js';
import { readOneFilePart } from '../uploads/one-file-part.js';
import { UnsupportedContentType } from '../uploads/upload.errors.js';
import { type CsvRow, readCsv } from './csv-reader.js';
import { CSV_MAX_BYTES, ImportFileTooLarge } from './csv.errors.js';

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
 * Import routes take CSV or multipart only, answered 415 before authentication otherwise (docs/api.md §1,
 * step 0).
 */
export const csvUploadOnly = contentTypeOnly('text/csv', 'multipart/form-data');

/**
 * Hands the uploaded CSV bytes to `read`: the body of a `text/csv` request, or the part named `file` of a
 * multipart one, read by {@link readOneFilePart} (400 `No file uploaded` without it, `Only one file may be
 * uploaded` with more).
 */
async function withCsvUpload<T>(
  request: FastifyRequest,
  read: (source: AsyncIterable<Buffer>) => Promise<T>,
): Promise<T> {
  if (!request.isMultipart()) {
    const body = request.body;
    // Not destroyed when reading stops early (a limit): Node then discards the rest of the body itself.
    return read(body instanceof Readable ? body.iterator({ destroyOnReturn: false }) : Readable.from([]));
  }
  // One byte over the limit is kept so the reader can tell "too large" from "exactly the limit".
  const parts = request.parts({ limits: { fileSize: CSV_MAX_BYTES + 1, files: 2 } });
  return readOneFilePart(parts, (file) => read(file.chunks));
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
