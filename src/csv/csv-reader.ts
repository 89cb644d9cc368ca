import { Readable } from 'node:stream';
import { CsvError, type InfoRecord, parse } from 'csv-parse';
import { readHead } from '../uploads/read-head.js';
import {
  CSV_MAX_BYTES,
  CSV_MAX_COLUMNS,
  CSV_MAX_RECORD_CHARS,
  CSV_MAX_ROWS,
  ImportFileTooLarge,
  MalformedCsv,
  MissingColumn,
  NoImportRows,
  TooManyColumns,
  TooManyImportRows,
} from './csv.errors.js';

/** One data row: its line number (where it starts; the header is line 1) and its cells by lower-cased column. */
export interface CsvRow<C extends string> {
  line: number;
  cells: Record<C, string>;
  /** The optional columns the header lacks (their cells read as ''), one set shared by every row. */
  absent?: ReadonlySet<C>;
}

/** The header line is looked at for its delimiter; one longer than this is read as comma-separated. */
const HEADER_PEEK_BYTES = 65_536;
const LINE_BREAK = /\r\n|\r|\n/g;
const QUOTED_CRLF = /\r\n/g;

/**
 * Reads a CSV upload with csv-parse, streaming and bounded (docs/api.md §9): at most {@link CSV_MAX_BYTES} bytes and
 * {@link CSV_MAX_ROWS} data rows (413 as soon as either is passed, without reading further), records of at most
 * {@link CSV_MAX_RECORD_CHARS} characters (400 `Malformed CSV at line <n>`, or 413 when the body is over its limit
 * too) and at most {@link CSV_MAX_COLUMNS} columns (400), a BOM ignored, `,`
 * or `;` as the header line uses, column names matched case-insensitively, blank lines skipped but counted.
 * `required` columns must be present (400 `Missing column: <name>`); `optional` ones read as '' when absent, and
 * each row's `absent` names the optional columns the header lacks (to tell an absent column from empty cells).
 */
export async function readCsv<R extends string, O extends string = never>(
  source: AsyncIterable<Buffer | string>,
  required: readonly R[],
  optional: readonly O[] = [],
): Promise<CsvRow<R | O>[]> {
  let lastLine = 0;
  let lastEmptyLines = 0;
  // csv-parse counts a CRLF inside a quoted cell as two lines (CR and LF each) and carries that into every later
  // line number: `overcount` is how many it added so far, and each record's true end line is kept here.
  let overcount = 0;
  const endLines = new WeakMap<string[], number>();
  const rest = limitBytes(source);
  const head = await readHead(
    rest,
    HEADER_PEEK_BYTES,
    (chunk) => chunk.includes(0x0a) || chunk.includes(0x0d),
  );
  const parser = parse({
    bom: true,
    delimiter: delimiterOf(head),
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count_less: true,
    max_record_size: CSV_MAX_RECORD_CHARS,
    skip_empty_lines: true,
    skip_records_with_empty_values: true,
    info: true,
    // Runs as each record is parsed, so the position is known even when a later error discards buffered records.
    // With `info`, each record arrives here as `{record, info}`, although the types name the record alone.
    on_record: (parsed: string[] | { record: string[] }, context: InfoRecord) => {
      const fields = Array.isArray(parsed) ? parsed : parsed.record;
      overcount += fields.reduce((sum, field) => sum + (field.match(QUOTED_CRLF)?.length ?? 0), 0);
      lastLine = context.lines - overcount;
      lastEmptyLines = context.empty_lines;
      endLines.set(fields, lastLine);
      return parsed as string[];
    },
  });
  const input = Readable.from(
    (async function* () {
      if (head.length > 0) yield head;
      yield* rest;
    })(),
  );
  // A limit error from the source must reach the caller as itself, not as a parse error.
  let sourceError: Error | undefined;
  input.on('error', (error: Error) => {
    sourceError = error;
    parser.destroy(error);
  });
  input.pipe(parser);

  const columns = new Map<string, number>();
  const rows: CsvRow<R | O>[] = [];
  let header = true;
  let absent: ReadonlySet<O> = new Set();
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[];
      info: { lines: number; empty_lines: number };
    }>) {
      if (header) {
        if (record.length > CSV_MAX_COLUMNS) throw new TooManyColumns();
        record.forEach((name, index) => {
          const key = name.trim().toLowerCase();
          if (!columns.has(key)) columns.set(key, index);
        });
        const missing = required.find((name) => !columns.has(name));
        if (missing !== undefined) throw new MissingColumn(missing);
        absent = new Set(optional.filter((name) => !columns.has(name)));
        header = false;
        continue;
      }
      if (rows.length === CSV_MAX_ROWS) throw new TooManyImportRows();
      const cells = {} as Record<R | O, string>;
      for (const name of [...required, ...optional]) {
        const index = columns.get(name);
        cells[name] = index === undefined ? '' : (record[index] ?? '');
      }
      // The record ends on its end line; line breaks inside quoted fields move its start back.
      const breaks = record.reduce((sum, field) => sum + (field.match(LINE_BREAK)?.length ?? 0), 0);
      rows.push({ line: (endLines.get(record) ?? info.lines) - breaks, cells, absent });
    }
  } catch (error) {
    // A record over the size limit may be a body over its own: 413 takes precedence, so the rest is counted
    // (not parsed) to tell which.
    if (error instanceof CsvError && error.code === 'CSV_MAX_RECORD_SIZE') await discardRest(input);
    input.destroy();
    if (sourceError !== undefined) throw sourceError;
    if (error instanceof CsvError) {
      throw new MalformedCsv(malformedLine(error, lastLine, lastEmptyLines, overcount));
    }
    throw error;
  }
  if (sourceError !== undefined) throw sourceError;
  if (rows.length === 0) throw new NoImportRows();
  return rows;
}

/** Reads what is left of `input` without keeping it, until its end or its error (the byte limit). */
function discardRest(input: Readable): Promise<void> {
  return new Promise((resolve) => {
    if (input.destroyed || input.readableEnded) return resolve();
    input.once('end', resolve);
    input.once('close', resolve);
    input.unpipe();
    input.resume();
  });
}

/** The line to name for a parse error: an unclosed quote or an overlong record is reported where it started. */
function malformedLine(error: CsvError, lastLine: number, lastEmptyLines: number, overcount: number): number {
  const { lines, empty_lines: emptyLines } = error as CsvError & { lines?: number; empty_lines?: number };
  if (error.code === 'CSV_QUOTE_NOT_CLOSED' || error.code === 'CSV_MAX_RECORD_SIZE')
    return lastLine + 1 + Math.max((emptyLines ?? 0) - lastEmptyLines, 0);
  return lines === undefined ? lastLine + 1 : lines - overcount;
}

/** `;` when the header line's first delimiter outside quotes is a semicolon, else `,`. */
export function delimiterOf(head: Buffer): ',' | ';' {
  let quoted = false;
  for (const byte of head) {
    if (byte === 0x22) quoted = !quoted;
    else if (!quoted && byte === 0x2c) return ',';
    else if (!quoted && byte === 0x3b) return ';';
    else if (!quoted && (byte === 0x0a || byte === 0x0d)) break;
  }
  return ',';
}

/** Passes the bytes through and fails with 413 once more than {@link CSV_MAX_BYTES} have come. */
async function* limitBytes(source: AsyncIterable<Buffer | string>): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += bytes.length;
    if (total > CSV_MAX_BYTES) throw new ImportFileTooLarge();
    yield bytes;
  }
}
