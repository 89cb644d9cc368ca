import { sniffImageType } from './image-type.js';

const bytes = (...values: (number | string)[]) =>
  Buffer.concat(values.map((v) => (typeof v === 'string' ? Buffer.from(v, 'latin1') : Buffer.from([v]))));

describe(sniffImageType.name, () => {
  it.each([
    ['PNG', bytes(0x89, 'PNG\r\n\x1a\n', 0, 0, 0, 0x0d), 'image/png'],
    ['JPEG (JFIF)', bytes(0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'JFIF'), 'image/jpeg'],
    ['JPEG (Exif)', bytes(0xff, 0xd8, 0xff, 0xe1), 'image/jpeg'],
    ['GIF87a', bytes('GIF87a', 1, 0), 'image/gif'],
    ['GIF89a', bytes('GIF89a', 1, 0), 'image/gif'],
    ['WebP', bytes('RIFF', 0x24, 0, 0, 0, 'WEBPVP8 '), 'image/webp'],
  ])('recognises %s by its magic bytes', (_name, head, type) => {
    expect(sniffImageType(head)).toBe(type);
  });

  it.each([
    ['an empty file', bytes()],
    ['text', bytes('hello, world')],
    ['a PDF', bytes('%PDF-1.7\n')],
    ['a PNG signature cut short', bytes(0x89, 'PNG\r\n')],
    ['JPEG start of image without the marker byte', bytes(0xff, 0xd8)],
    ['GIF of an unknown version', bytes('GIF90a')],
    ['a RIFF file that is not WebP (WAV)', bytes('RIFF', 0x24, 0, 0, 0, 'WAVEfmt ')],
    ['RIFF cut before the format', bytes('RIFF', 0x24, 0, 0, 0, 'WEB')],
    ['an SVG', bytes('<svg xmlns="http://www.w3.org/2000/svg"/>')],
  ])('refuses %s', (_name, head) => {
    expect(sniffImageType(head)).toBeUndefined();
  });
});
