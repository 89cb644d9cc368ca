/**
 * The first bytes of an upload, for a look before the rest is read (an image's type, a CSV header's delimiter):
 * chunks of `source` until `bytes` have come, its end, or a chunk `enough` accepts, in one buffer. The rest stays
 * in `source`.
 */
export async function readHead(
  source: AsyncIterator<Buffer>,
  bytes: number,
  enough: (chunk: Buffer) => boolean = () => false,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  while (length < bytes) {
    const next = await source.next();
    if (next.done) break;
    chunks.push(next.value);
    length += next.value.length;
    if (enough(next.value)) break;
  }
  return Buffer.concat(chunks);
}
