import { ApiResponse } from '@nestjs/swagger';
import { AppError, fixedError, UNSUPPORTED_CONTENT_TYPE_MESSAGE, ValidationFailed } from '../core/errors.js';
import { type Schema } from '../openapi/openapi.js';
import { NO_FILE_UPLOADED_MESSAGE } from '../uploads/upload.errors.js';

/** The largest import body: 5 MiB (docs/api.md §9). */
export const CSV_MAX_BYTES = 5 * 1024 * 1024;
/** The most data rows one import may carry. */
export const CSV_MAX_ROWS = 10_000;
/** The longest record (line, or lines of one quoted record), in characters: the parser's buffer per record. */
export const CSV_MAX_RECORD_CHARS = 65_536;
/** The most columns a header may name: a line of separators must not become an array of millions of cells. */
export const CSV_MAX_COLUMNS = 256;

const IMPORT_FILE_TOO_LARGE_MESSAGE = 'Import file too large';

export class ImportFileTooLarge extends fixedError(413, IMPORT_FILE_TOO_LARGE_MESSAGE) {}

export class TooManyImportRows extends AppError {
  constructor() {
    super(413, `At most ${CSV_MAX_ROWS} rows are allowed per import`);
  }
}

const NO_IMPORT_ROWS_MESSAGE = 'The file has no rows';

export class NoImportRows extends fixedError(400, NO_IMPORT_ROWS_MESSAGE) {}

export class MissingColumn extends ValidationFailed {
  constructor(name: string) {
    super(`Missing column: ${name}`);
  }
}

export class TooManyColumns extends ValidationFailed {
  constructor() {
    super(`At most ${CSV_MAX_COLUMNS} columns are allowed per import`);
  }
}

export class MalformedCsv extends ValidationFailed {
  constructor(line: number) {
    super(`Malformed CSV at line ${line}`);
  }
}

const IMPORT_HAS_ERRORS_MESSAGE = 'Import has errors; nothing was changed';

/** Any row failed: nothing changed; the per-row result travels as `data` (docs/api.md §9). */
export class ImportHasErrors extends AppError {
  constructor(result: unknown) {
    super(422, IMPORT_HAS_ERRORS_MESSAGE, result);
  }
}

export const CSV_IMPORT_MESSAGES = {
  400: [
    NO_IMPORT_ROWS_MESSAGE,
    'Missing column: <name>',
    'Malformed CSV at line <n>',
    `At most ${CSV_MAX_COLUMNS} columns are allowed per import`,
    NO_FILE_UPLOADED_MESSAGE,
  ],
  413: [IMPORT_FILE_TOO_LARGE_MESSAGE, `At most ${CSV_MAX_ROWS} rows are allowed per import`],
  415: [UNSUPPORTED_CONTENT_TYPE_MESSAGE],
};

/** The 422 of an import: the error envelope carrying the per-row result as `data`. */
export const ApiImportHasErrors = (result: Schema) =>
  ApiResponse({
    status: 422,
    description: IMPORT_HAS_ERRORS_MESSAGE,
    schema: {
      type: 'object',
      required: ['success', 'data', 'message'],
      properties: {
        success: { type: 'boolean', enum: [false] },
        data: result,
        message: { type: 'string', example: IMPORT_HAS_ERRORS_MESSAGE },
      },
    },
  });
