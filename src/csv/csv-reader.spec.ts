import { Readable } from 'node:stream';
import { delimiterOf, readCsv } from './csv-reader.js';
import * as errors from './csv.errors.js';

/** An upload arriving in the given pieces. */
const chunks = (...pieces: (string | Buffer)[]) => Readable.from(pieces);

/** An upload of a header and then `count` rows of `row`, made lazily, counting how many rows were read. */
function counted(row: Buffer, count: number) {
  const state = { read: 0 };
  function* source(): Generator<Buffer> {
    yield Buffer.from('username,email\n');
    for (let i = 0; i < count; i++) {
      state.read++;
      yield row;
    }
  }
  return { source: Readable.from(source()), state };
}

/** The rows' lines and cells (which optional columns the header lacks is tested on its own). */
const read = async (text: string | Buffer, optional: readonly 'admin'[] = []) =>
  (await readCsv(chunks(text), ['username', 'email'] as const, optional)).map(({ line, cells }) => ({
    line,
    cells,
  }));

describe(readCsv.name, () => {
  it('reads rows by column name, case-insensitively and in any order, with their line numbers', async () => {
    const rows = await read('Email, USERNAME ,extra\nada@example.edu,ada,x\nbob@example.edu,bob,y\n');
    expect(rows).toEqual([
      { line: 2, cells: { username: 'ada', email: 'ada@example.edu' } },
      { line: 3, cells: { username: 'bob', email: 'bob@example.edu' } },
    ]);
  });

  it('reads an optional column as empty when absent, and a short row as empty cells', async () => {
    expect(await read('username,email\nada,ada@example.edu\n', ['admin'])).toEqual([
      { line: 2, cells: { username: 'ada', email: 'ada@example.edu', admin: '' } },
    ]);
    expect(await read('username,email,admin\nada\n', ['admin'])).toEqual([
      { line: 2, cells: { username: 'ada', email: '', admin: '' } },
    ]);
  });

  it('takes the delimiter from the header line: a semicolon when it comes first outside quotes', async () => {
    expect(await read('username;email\nada;ada@example.edu\n')).toEqual([
      { line: 2, cells: { username: 'ada', email: 'ada@example.edu' } },
    ]);
    // Commas inside the semicolon-separated cells stay in the cell.
    expect(await read('username;"e,mail";email\nada;x,y;ada@example.edu\n')).toEqual([
      { line: 2, cells: { username: 'ada', email: 'ada@example.edu' } },
    ]);
  });

  it('ignores a byte order mark', async () => {
    expect(await read(Buffer.from('\uFEFFusername,email\nada,ada@example.edu\n'))).toEqual([
      { line: 2, cells: { username: 'ada', email: 'ada@example.edu' } },
    ]);
    // Before a quoted first name too, where it would otherwise make the quote stray.
    expect(await read(Buffer.from('\uFEFF"username";"email"\nada;ada@example.edu\n'))).toEqual([
      { line: 2, cells: { username: 'ada', email: 'ada@example.edu' } },
    ]);
  });

  it.each([
    [
      'skips blank lines but counts them, whatever the line breaks',
      'username,email\r\n\r\nada,ada@example.edu\r\n,\n\rbob,bob@example.edu',
      [
        [3, 'ada'],
        [6, 'bob'],
      ],
    ],
    [
      'numbers a row by the line it starts on when a quoted cell holds line breaks',
      'username,email\n"ada\nlovelace",ada@example.edu\n"b\n\nob",bob@example.edu\ncy,cy@x.edu\n',
      [
        [2, 'ada\nlovelace'],
        [4, 'b\n\nob'],
        [7, 'cy'],
      ],
    ],
    [
      'numbers rows right after a quoted cell holding CRLF line breaks (Windows files)',
      'username,email\r\n"a\r\nb",a@x.edu\r\ncy,cy@x.edu\r\n"d\r\n\r\ne",d@x.edu\r\nf,f@x.edu\r\n',
      [
        [2, 'a\r\nb'],
        [4, 'cy'],
        [5, 'd\r\n\r\ne'],
        [8, 'f'],
      ],
    ],
  ])('%s', async (_title, text, lines) => {
    const rows = await read(text);
    expect(rows.map((row) => [row.line, row.cells.username])).toEqual(lines);
  });

  it('names the right line for an error after a quoted cell holding CRLF line breaks', async () => {
    await expect(read('username,email\r\n"a\r\nb",a@x.edu\r\nb"o"b,bob@x.edu\r\n')).rejects.toEqual(
      new errors.MalformedCsv(4),
    );
    await expect(read('username,email\r\n"a\r\nb",a@x.edu\r\n\r\n"bob,bob@x.edu\r\n')).rejects.toEqual(
      new errors.MalformedCsv(5),
    );
  });

  it('reads a header and rows split anywhere across the upload', async () => {
    const rows = await readCsv(chunks('user', 'name,em', 'ail\nada,ada@exa', 'mple.edu\n'), [
      'username',
      'email',
    ]);
    expect(rows).toEqual([
      { line: 2, cells: { username: 'ada', email: 'ada@example.edu' }, absent: new Set() },
    ]);
  });

  it('tells the optional columns the header lacks from present but empty ones, one set for every row', async () => {
    const rows = await readCsv(
      chunks('username,email,admin\nada,ada@example.edu,\nbob,bob@example.edu,\n'),
      ['username', 'email'],
      ['admin', 'password'],
    );
    expect(rows[0].absent).toEqual(new Set(['password']));
    expect(rows[1].absent).toBe(rows[0].absent);
    expect(rows[0].cells).toEqual({ username: 'ada', email: 'ada@example.edu', admin: '', password: '' });
  });

  it('refuses a file without the required columns, naming the first missing', async () => {
    await expect(read('user,mail\nada,ada@example.edu\n')).rejects.toEqual(
      new errors.MissingColumn('username'),
    );
    await expect(read('username,mail\nada,ada@example.edu\n')).rejects.toThrow('Missing column: email');
  });

  it('refuses a file with no data rows', async () => {
    await expect(read('username,email\n')).rejects.toBeInstanceOf(errors.NoImportRows);
    await expect(read('username,email\n\n\n')).rejects.toThrow('The file has no rows');
    await expect(read('')).rejects.toBeInstanceOf(errors.NoImportRows);
  });

  it('names the line where an unclosed quote starts', async () => {
    await expect(
      read('username,email\nada,ada@example.edu\n\n"bob,bob@example.edu\ncy,cy@x.edu\n'),
    ).rejects.toEqual(new errors.MalformedCsv(4));
  });

  it('names the line of a quote in the middle of a cell', async () => {
    await expect(read('username,email\nada,ada@example.edu\nb"o"b,bob@example.edu\n')).rejects.toThrow(
      'Malformed CSV at line 3',
    );
  });

  it('refuses a record longer than the limit as malformed, at its line', async () => {
    const long = 'x'.repeat(errors.CSV_MAX_RECORD_CHARS + 1);
    await expect(read(`username,email\nada,ada@example.edu\n${long},a@b.edu\n`)).rejects.toEqual(
      new errors.MalformedCsv(3),
    );
  });

  it(`refuses more than ${errors.CSV_MAX_COLUMNS} columns`, async () => {
    const header = [
      'username',
      'email',
      ...Array.from({ length: errors.CSV_MAX_COLUMNS - 1 }, (_, i) => `c${i}`),
    ];
    await expect(read(`${header.join(',')}\nada,ada@example.edu\n`)).rejects.toBeInstanceOf(
      errors.TooManyColumns,
    );
    await expect(read(`${header.slice(0, -1).join(',')}\nada,ada@example.edu\n`)).resolves.toHaveLength(1);
  });

  it(`refuses more than ${errors.CSV_MAX_ROWS} rows`, async () => {
    const rows = (count: number) => `username,email\n${'ada,ada@example.edu\n'.repeat(count)}`;
    await expect(read(rows(errors.CSV_MAX_ROWS))).resolves.toHaveLength(errors.CSV_MAX_ROWS);
    await expect(read(rows(errors.CSV_MAX_ROWS + 1))).rejects.toBeInstanceOf(errors.TooManyImportRows);
  });

  it('refuses a body over the byte limit as soon as it is passed, without reading the rest', async () => {
    // Rows of 60 000 characters: few enough rows, short enough records, to meet the byte limit first.
    const row = Buffer.from(`${'x'.repeat(60_000)},a@b.edu\n`);
    const pieces = Math.ceil(errors.CSV_MAX_BYTES / row.length) + 50;
    const { source, state } = counted(row, pieces);
    await expect(readCsv(source, ['username', 'email'])).rejects.toBeInstanceOf(errors.ImportFileTooLarge);
    expect(state.read).toBeLessThan(pieces);
  });

  it('answers 413, not malformed, for an overlong record in a body over the byte limit', async () => {
    // In pieces, as an upload arrives: the parser meets the overlong record before the byte limit is passed.
    const piece = 'x'.repeat(65_536);
    const pieces = [
      'username,email\n',
      ...Array.from({ length: errors.CSV_MAX_BYTES / piece.length + 1 }, () => piece),
    ];
    await expect(readCsv(chunks(...pieces), ['username', 'email'])).rejects.toBeInstanceOf(
      errors.ImportFileTooLarge,
    );
    // The same record in a body within the limit is malformed.
    await expect(readCsv(chunks(...pieces.slice(0, 4)), ['username', 'email'])).rejects.toEqual(
      new errors.MalformedCsv(2),
    );
  });
});

describe(delimiterOf.name, () => {
  it.each([
    ['username,email', ','],
    ['username;email', ';'],
    ['"a;b",c;d', ','],
    ['"a,b";c,d', ';'],
    ['username', ','],
    ['username\nx;y', ','],
    ['username\r;email', ','],
  ])('reads %j as %j', (head, expected) => {
    expect(delimiterOf(Buffer.from(head))).toBe(expected);
  });
});
