import { parse } from 'csv-parse/sync';
import yauzl from 'yauzl';

/** One file of an export's zip, read by yauzl and parsed by csv-parse as strictly as an importer would. */
export interface ZipCsv {
  name: string;
  /** The bytes as stored (decompressed). */
  bytes: Buffer;
  /** 8 = DEFLATE. */
  compressionMethod: number;
  header: string[];
  /** Data rows as objects keyed by the header, cells as text. */
  rows: Record<string, string>[];
  /** Data rows as arrays of cells. */
  records: string[][];
}

/** Every entry of `zip`, in the zip's order, through a zip reader this project did not write. */
export async function readZip(
  zip: Buffer,
): Promise<{ name: string; bytes: Buffer; compressionMethod: number }[]> {
  const file = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(
      zip,
      { lazyEntries: true, strictFileNames: true, validateEntrySizes: true },
      (error, opened) => (error ? reject(error) : resolve(opened)),
    ),
  );
  const entries: { name: string; bytes: Buffer; compressionMethod: number }[] = [];
  await new Promise<void>((resolve, reject) => {
    file.on('error', reject);
    file.on('end', () => resolve());
    file.on('entry', (entry: yauzl.Entry) => {
      file.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', reject);
        stream.on('end', () => {
          entries.push({
            name: entry.fileName,
            bytes: Buffer.concat(chunks),
            compressionMethod: entry.compressionMethod,
          });
          file.readEntry();
        });
      });
    });
    file.readEntry();
  });
  return entries;
}

/**
 * Parses one CSV file as RFC 4180 with `\r\n` records: no relaxed quotes, no ragged rows, nothing skipped or
 * trimmed, no BOM handling (a BOM would end up in the first header name and fail its check).
 */
export function parseCsv(bytes: Buffer): string[][] {
  const records: string[][] = parse(bytes.toString('utf8'), {
    record_delimiter: '\r\n',
    relax_quotes: false,
    relax_column_count: false,
    skip_empty_lines: false,
    skip_records_with_error: false,
    trim: false,
    bom: false,
    cast: false,
  });
  return records;
}

/** Every entry of an export's zip, parsed; fails on anything an importer would refuse at the byte level. */
export async function readExport(zip: Buffer): Promise<Map<string, ZipCsv>> {
  const files = new Map<string, ZipCsv>();
  for (const entry of await readZip(zip)) {
    const text = entry.bytes.toString('utf8');
    if (entry.bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])))
      throw new Error(`${entry.name} has a BOM`);
    if (!text.endsWith('\r\n')) throw new Error(`${entry.name} does not end with \\r\\n`);
    if (/\r(?!\n)|(?<!\r)\n/.test(text)) throw new Error(`${entry.name} has a bare CR or LF`);
    const [header, ...records] = parseCsv(entry.bytes);
    files.set(entry.name, {
      ...entry,
      header,
      records,
      rows: records.map((record) => Object.fromEntries(header.map((name, i) => [name, record[i]]))),
    });
  }
  return files;
}

/** The body of a response as bytes. */
export async function download(
  url: string,
  token: string,
): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return {
    status: response.status,
    headers: response.headers,
    body: Buffer.from(await response.arrayBuffer()),
  };
}
