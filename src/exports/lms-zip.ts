import { pipeline, type Readable, Transform } from 'node:stream';
import { stringify } from 'csv-stringify';
import { stringify as stringifyNow } from 'csv-stringify/sync';
import { ZipFile } from 'yazl';

/** One CSV file of an export: its rows given at once, or streamed from the database and mapped one by one. */
export type CsvEntry =
  | { name: string; header: readonly string[]; records: string[][] }
  | { name: string; header: readonly string[]; rows: () => Readable; record: (row: never) => string[] };

/** RFC 4180 with `\r\n`: a field is quoted when it holds `,`, `"` or a line end (none reach here: oneLine). */
const CSV_OPTIONS = { record_delimiter: 'windows', eof: true } as const;

/** A file's text when its rows are few and known (manifest, orgs, session). */
const csvText = (header: readonly string[], records: string[][]): string =>
  stringifyNow([[...header], ...records], CSV_OPTIONS);

/**
 * A streamed file: header, then one record per row as the reader takes them (back-pressure to the cursor).
 * `beforeEnd` runs once the last row is written, and the file ends only when it has resolved.
 */
function csvStream(entry: Extract<CsvEntry, { rows: unknown }>, beforeEnd?: () => Promise<void>): Readable {
  const records = new Transform({
    objectMode: true,
    transform(row: unknown, _encoding, done) {
      done(null, entry.record(row as never));
    },
    flush(done) {
      if (beforeEnd === undefined) done();
      else beforeEnd().then(() => done(), done);
    },
  });
  const csv = stringify({ ...CSV_OPTIONS, header: true, columns: [...entry.header] });
  const chunks = chunked();
  pipeline(entry.rows(), records, csv, chunks, () => undefined);
  return chunks;
}

/**
 * Gathers the CSV text into chunks of about 64 KiB: yazl deflates each chunk it is given in a zlib call of its
 * own, and one call per record (about 60 bytes) was most of an export's CPU (docs/benchmarks.md, "LMS exports").
 */
function chunked(limit = 64 * 1024): Transform {
  let parts: Buffer[] = [];
  let size = 0;
  const take = () => {
    const chunk = Buffer.concat(parts, size);
    parts = [];
    size = 0;
    return chunk;
  };
  return new Transform({
    transform(chunk: Buffer | string, _encoding, done) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      parts.push(bytes);
      size += bytes.length;
      if (size >= limit) done(null, take());
      else done();
    },
    flush(done) {
      if (size > 0) done(null, take());
      else done();
    },
  });
}

/** What the zip tells its owner: all rows were read (before the zip's last bytes), or it failed first. */
export interface ZipHooks {
  /** After the last streamed row, before the rest of the zip is written: the zip waits for it. */
  rowsRead: () => Promise<void>;
  /** The zip failed or its reader left before `rowsRead` (never called after it). */
  failed: () => void;
}

/**
 * A zip of `entries`, all at its root, each DEFLATE-compressed as it is written (yazl), in the given order. A
 * streamed entry's rows are asked for only when its turn comes, so the cursors of one snapshot run one after
 * another.
 */
export function zipStream(entries: readonly CsvEntry[], mtime: Date, hooks: ZipHooks): Readable {
  const zip = new ZipFile();
  const options = { mtime, compress: true };
  const last = entries.findLast((entry) => 'rows' in entry);
  let settled = false;
  const rowsRead = () => {
    settled = true;
    return hooks.rowsRead();
  };
  for (const entry of entries) {
    if ('records' in entry)
      zip.addBuffer(Buffer.from(csvText(entry.header, entry.records)), entry.name, options);
    else
      zip.addReadStreamLazy(entry.name, options, (callback) =>
        callback(null, csvStream(entry, entry === last ? rowsRead : undefined)),
      );
  }
  zip.end();
  const output = zip.outputStream as Readable;
  const fail = () => {
    if (settled) return;
    settled = true;
    hooks.failed();
  };
  // A failed cursor reaches yazl as an error of its entry's stream: the answer is cut, the snapshot rolled back.
  zip.on('error', (error: Error) => {
    output.destroy(error);
    fail();
  });
  output.once('close', fail);
  return output;
}
