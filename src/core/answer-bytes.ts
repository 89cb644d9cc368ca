import { type ServerResponse } from 'node:http';
import { types } from 'node:util';

/**
 * Frees the bytes of a large answer as soon as its response has closed (after its last byte was written, or when
 * its connection was lost), instead of at V8's next full collection.
 *
 * Left to the collector, they outlive the answer. The Buffer passes through objects of the request that V8 has
 * promoted to its old generation while the request waited (for the pool, the answer budget, PostgreSQL): Nest's
 * promises, the socket's write queue. A young-generation collection keeps alive whatever an old object points at,
 * whether that object is still reachable or not, so the Buffer is promoted too, and its bytes wait for a full
 * collection, which V8 starts for such memory only once 64 MiB more of it has piled up (docs/performance.md, "Peak
 * memory under the large read"). Transferring the ArrayBuffer detaches it: its bytes move to a new ArrayBuffer
 * that nothing holds, which the next young-generation collection frees.
 *
 * Only for a Buffer that has an ArrayBuffer of its own, which nothing else reads after the response: never one of
 * Node's shared pool (`Buffer.allocUnsafe` takes at most 4 KiB from it), which is left alone.
 */
export function freeWhenClosed(response: ServerResponse, body: Buffer): void {
  const bytes = body.buffer;
  if (!types.isArrayBuffer(bytes) || body.byteOffset !== 0 || body.byteLength !== bytes.byteLength) return;
  if (response.destroyed) return;
  response.once('close', () => structuredClone(bytes, { transfer: [bytes] }));
}
