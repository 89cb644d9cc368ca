import { pipeline, type Readable } from 'node:stream';
import { applyDecorators, StreamableFile } from '@nestjs/common';
import { ApiProduces, ApiResponse } from '@nestjs/swagger';
import { stringify } from 'csv-stringify';

/**
 * Characters that make a spreadsheet read a cell as a formula (or hide one behind whitespace), and their
 * full-width forms, which spreadsheets with East Asian input read as the same operators.
 */
const FORMULA_START = /^[=+\-@\t\r＝＋－＠]/;

/**
 * Quoted besides what csv-stringify quotes by itself (`,`, `"`, the `\r\n` record delimiter): `;`, so that a
 * spreadsheet whose list separator is `;` never splits a cell, and a lone CR or LF.
 */
const ALWAYS_QUOTED = /[;\r\n]/;

/** A text cell, prefixed with `'` when a spreadsheet would run it as a formula (docs/api.md §9). */
function guardedCell(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

export interface CsvOptions {
  /**
   * The `'` prefix of docs/api.md §9 on cells a spreadsheet would run as formulas (default on). Off for files
   * meant for another program, which would keep the `'` as part of the value.
   */
  spreadsheetGuard?: boolean;
}

/**
 * A CSV download: a header line, then one line per row of `rows` (an object stream), `\r\n` line ends,
 * fields quoted when needed, text cells through {@link guardedCell} unless `spreadsheetGuard` is off.
 * Back-pressure reaches the database cursor, so memory does not grow with the number of rows.
 */
export function csvDownload(
  rows: Readable,
  columns: readonly string[],
  filename: string,
  onClose: () => void = () => undefined,
  { spreadsheetGuard = true }: CsvOptions = {},
): StreamableFile {
  const csv = stringify({
    header: true,
    columns: [...columns],
    record_delimiter: 'windows',
    quoted_match: ALWAYS_QUOTED,
    cast: {
      boolean: (value) => String(value),
      date: (value) => value.toISOString(),
      number: (value) => String(value),
      string: spreadsheetGuard ? guardedCell : (value) => value,
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
