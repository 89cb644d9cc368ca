import { pipeline, type Readable } from 'node:stream';
import { applyDecorators, StreamableFile } from '@nestjs/common';
import { ApiProduces, ApiResponse } from '@nestjs/swagger';
import { stringify } from 'csv-stringify';

/** Characters that make a spreadsheet read a cell as a formula (or hide one behind whitespace). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A text cell, prefixed with `'` when a spreadsheet would run it as a formula (docs/api.md §9). */
function csvCell(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * A CSV download: a header line, then one line per row of `rows` (an object stream), `\r\n` line ends,
 * fields quoted when needed, each cell through {@link csvCell}. Back-pressure reaches the database cursor, so
 * memory does not grow with the number of rows.
 */
export function csvDownload(
  rows: Readable,
  columns: readonly string[],
  filename: string,
  onClose: () => void = () => undefined,
): StreamableFile {
  const csv = stringify({
    header: true,
    columns: [...columns],
    record_delimiter: 'windows',
    cast: {
      boolean: (value) => String(value),
      date: (value) => value.toISOString(),
      number: (value) => String(value),
      string: (value) => csvCell(value),
    },
  });
  pipeline(rows, csv, () => onClose());
  return new StreamableFile(csv, {
    type: 'text/csv; charset=utf-8',
    disposition: `attachment; filename="${filename}"`,
  });
}

/** Documents a route answering with {@link csvDownload}: 200 `text/csv`, `example` being a whole file. */
export const ApiCsvDownload = (example: string) =>
  applyDecorators(
    ApiProduces('text/csv'),
    ApiResponse({
      status: 200,
      description: 'The CSV file',
      content: { 'text/csv': { schema: { type: 'string', example } } },
    }),
  );
