/** The avatar formats the service accepts, by content type. */
export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** How many leading bytes {@link sniffImageType} needs to tell every format apart. */
export const SNIFF_BYTES = 12;

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff]);
const GIF87A = Buffer.from('GIF87a', 'latin1');
const GIF89A = Buffer.from('GIF89a', 'latin1');
const RIFF = Buffer.from('RIFF', 'latin1');
const WEBP = Buffer.from('WEBP', 'latin1');

const startsWith = (head: Buffer, magic: Buffer, at = 0) =>
  head.length >= at + magic.length && head.subarray(at, at + magic.length).equals(magic);

/**
 * The image type that the file's first bytes (magic numbers) announce, or undefined for anything else,
 * an empty file included. The client's declared content type is never consulted.
 */
export function sniffImageType(head: Buffer): ImageType | undefined {
  if (startsWith(head, PNG)) return 'image/png';
  if (startsWith(head, JPEG)) return 'image/jpeg';
  if (startsWith(head, GIF87A) || startsWith(head, GIF89A)) return 'image/gif';
  if (startsWith(head, RIFF) && startsWith(head, WEBP, 8)) return 'image/webp';
  return undefined;
}
