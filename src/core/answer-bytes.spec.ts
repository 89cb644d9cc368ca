import http, { type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { freeWhenClosed } from './answer-bytes.js';

/** Serves one answer from `respond` on a real socket, reads it whole, and waits for the response's 'close'. */
async function serveOnce(respond: (response: ServerResponse) => void): Promise<string> {
  let closed!: Promise<void>;
  const server = http.createServer((_request, response) => {
    closed = new Promise((resolve) => response.once('close', () => resolve()));
    respond(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    const text = await answer.text();
    await closed;
    return text;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe(freeWhenClosed.name, () => {
  it('lets go of a large answer’s bytes once its response has closed, after they were sent whole', async () => {
    const body = Buffer.allocUnsafe(256 * 1024).fill('x');
    const sent = await serveOnce((response) => {
      freeWhenClosed(response, body);
      response.end(body);
    });
    expect(sent).toBe('x'.repeat(256 * 1024));
    // Detached: the ArrayBuffer no longer holds the bytes, so the collector's timing no longer matters.
    expect(body.buffer.byteLength).toBe(0);
    expect(body.length).toBe(0);
  });

  it('leaves a Buffer on Node’s shared pool alone', async () => {
    const body = Buffer.from('{"small":true}');
    const pool = body.buffer.byteLength;
    expect(pool).toBeGreaterThan(body.length);
    const sent = await serveOnce((response) => {
      freeWhenClosed(response, body);
      response.end(body);
    });
    expect(sent).toBe('{"small":true}');
    expect(body.buffer.byteLength).toBe(pool);
    expect(body.toString()).toBe('{"small":true}');
  });
});
