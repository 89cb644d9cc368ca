import { ApiResponse } from '@nestjs/swagger';
import { AppError, ValidationFailed } from '../core/errors.js';
import { type Schema } from '../openapi/openapi.js';

/** The largest import body: 5 MiB (docs/api.md §9). */
export const CSV_MAX_BYTES = 5 * 1024 * 1024;
/** The most data rows one import may carry. */
export const CSV_MAX_ROWS = 10_000;
/** The longest record (line, or lines of one quoted record), in characters: the parser's buffer per record. */
export const CSV_MAX_RECORD_CHARS = 65_536;
/** The most columns a header may name: a line of separators must not become an array of millions of cells. */
export const CSV_MAX_COLUMNS = 256;

export class ImportFileTooLarge extends AppError {
  constructor() {
    super(413, 'Import file too large');
  }
}

export class TooManyImportRows extends AppError {
  constructor() {
    super(413, `At most ${CSV_MAX_ROWS} rows are allowed per import`);
  }
}

export class NoImportRows extends ValidationFailed {
  constructor() {
    super('The file has no rows');
  }
}

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

/** Any row failed: nothing changed; the per-row result travels as `data` (docs/api.md §9). */
export class ImportHasErrors extends AppError {
  constructor(result: unknown) {
    super(422, 'Import has errors; nothing was changed', result);
  }
}

export const CSV_IMPORT_MESSAGES = {
  400: [
    'The file has no rows',
    'Missing column: <name>',
    'Malformed CSV at line <n>',
    `At most ${CSV_MAX_COLUMNS} columns are allowed per import`,
    'No file uploaded',
  ],
  413: ['Import file too large', `At most ${CSV_MAX_ROWS} rows are allowed per import`],
  415: ['Unsupported content type'],
};

/** The 422 of an import: the error envelope carrying the per-row result as `data`. */
export const ApiImportHasErrors = (result: Schema) =>
  ApiResponse({
    status: 422,
    description: 'Import has errors; nothing was changed',
    schema: {
      type: 'object',
      required: ['success', 'data', 'message'],
      properties: {
        success: { type: 'boolean', enum: [false] },
        data: result,
        message: { type: 'string', example: 'Import has errors; nothing was changed' },
      },
    },
  });
