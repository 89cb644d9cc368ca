import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { csvDownload } from './csv-writer.js';

/** The file `csvDownload` streams for `rows` under the columns `a,b`. */
const written = (rows: Record<string, unknown>[], options?: Parameters<typeof csvDownload>[4]) =>
  text(csvDownload(Readable.from(rows), ['a', 'b'], 'x.csv', undefined, options).getStream());

describe(csvDownload.name, () => {
  it('quotes a field holding ; (a spreadsheet whose list separator is ; never splits it), CR or LF', async () => {
    expect(await written([{ a: 'x;=1+1', b: 'plain' }])).toBe('a,b\r\n"x;=1+1",plain\r\n');
    expect(await written([{ a: 'one\rtwo', b: 'one\ntwo' }])).toBe('a,b\r\n"one\rtwo","one\ntwo"\r\n');
    expect(await written([{ a: 'say "hi"', b: 'a,b' }])).toBe('a,b\r\n"say ""hi""","a,b"\r\n');
  });

  it("prefixes with ' a cell a spreadsheet would run as a formula, full-width forms included", async () => {
    const starts = ['=', '+', '-', '@', '\t', '\r', '＝', '＋', '－', '＠'];
    const file = await written(starts.map((start) => ({ a: `${start}1+1`, b: `x${start}` })));
    const lines = file.split('\r\n').slice(1, -1);
    expect(lines).toEqual([
      "'=1+1,x=",
      "'+1+1,x+",
      "'-1+1,x-",
      "'@1+1,x@",
      "'\t1+1,x\t",
      '"\'\r1+1","x\r"',
      "'＝1+1,x＝",
      "'＋1+1,x＋",
      "'－1+1,x－",
      "'＠1+1,x＠",
    ]);
    expect(await written([{ a: -5, b: true }])).toBe('a,b\r\n-5,true\r\n');
  });

  it('writes cells as they are without the spreadsheet guard, still quoting what needs it', async () => {
    expect(await written([{ a: '=1+1', b: 'x;＠y' }], { spreadsheetGuard: false })).toBe(
      'a,b\r\n=1+1,"x;＠y"\r\n',
    );
  });
});
