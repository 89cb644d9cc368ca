// Part of test/http.e2e-spec.ts: early answers to a raw socket that keeps writing a large body.
import net from 'node:net';
import { rawRequest } from '../../support/raw-http.js';
import { waitFor } from '../../support/wait-for.js';
import { type EarlyAnswerContext, MISSING_USER } from './context.js';

export function rawSocketTests(ctx: EarlyAnswerContext): void {
  const { app, given } = ctx;

  describe('a raw socket that keeps writing a large body', () => {
    const multipart = { 'content-type': 'multipart/form-data; boundary=xyz' };
    const json = { 'content-type': 'application/json' };
    const cases: [string, string, string, () => Record<string, string>, number, string][] = [
      [
        'avatar of an unknown user',
        'PUT',
        `/api/users/${MISSING_USER}/avatar`,
        () => ({ ...multipart, authorization: `Bearer ${given.adminToken}` }),
        404,
        'User not found',
      ],
      [
        'avatar without a token',
        'PUT',
        '/api/users/1/avatar',
        () => multipart,
        401,
        'Authentication required',
      ],
      [
        'avatar by a non-admin',
        'PUT',
        '/api/users/1/avatar',
        () => ({ ...multipart, authorization: `Bearer ${given.userToken}` }),
        403,
        'You do not have permission to perform this action',
      ],
      [
        'avatar as text',
        'PUT',
        '/api/users/1/avatar',
        () => ({ 'content-type': 'text/plain', authorization: `Bearer ${given.adminToken}` }),
        415,
        'Unsupported content type',
      ],
      [
        'JSON over 1 MiB to POST /api/modules',
        'POST',
        '/api/modules',
        () => ({ ...json, authorization: `Bearer ${given.adminToken}` }),
        413,
        'Request body too large',
      ],
      ['JSON over 1 MiB without a token', 'POST', '/api/users', () => json, 413, 'Request body too large'],
      [
        'text to PUT /api/auth/password',
        'PUT',
        '/api/auth/password',
        () => ({ 'content-type': 'text/plain', authorization: `Bearer ${given.userToken}` }),
        415,
        'Unsupported content type',
      ],
      // The body is framed before routing: an oversized one is refused before the route is looked up.
      [
        'JSON over 1 MiB to an unknown route',
        'POST',
        '/api/nothing-here',
        () => json,
        413,
        'Request body too large',
      ],
    ];

    it.each(cases)('%s: %s %s', async (_name, method, path, headers, status, message) => {
      const answer = await rawRequest(app.url, method, path, headers(), 16 * 1024 * 1024);
      expect(answer.status).toBe(status);
      expect(answer.body.success).toBe(false);
      expect(answer.body.message).toBe(message);
      expect(answer.headers['x-request-id']).toBeTruthy();
      // The service did not wait for the 16 MiB it was promised.
      expect(answer.written).toBeLessThan(16 * 1024 * 1024);
    });
  });

  it('a client that keeps writing after the answer is cut off after a bounded amount, with a close it can read', async () => {
    const declared = 64 * 1024 * 1024;
    const answer = await rawRequest(
      app.url,
      'PUT',
      `/api/users/${MISSING_USER}/avatar`,
      { 'content-type': 'multipart/form-data; boundary=xyz', authorization: `Bearer ${given.adminToken}` },
      declared,
      true,
    );
    expect(answer.status).toBe(404);
    expect(answer.body.message).toBe('User not found');
    // 4 MiB are drained, plus what the socket buffers hold on both sides.
    expect(answer.writtenAtClose).toBeLessThan(16 * 1024 * 1024);
    expect(answer.closedAfterMs).toBeLessThan(8_000);
  });

  it('a body drained in full leaves the connection open for the next request', async () => {
    const { hostname, port } = new URL(app.url);
    const socket = net.connect(Number(port), hostname);
    const body = Buffer.alloc(512 * 1024, 0x61);
    const texts: string[] = [];
    socket.on('data', (data: Buffer) => texts.push(data.toString('latin1')));
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `PUT /api/users/${MISSING_USER}/avatar HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${given.adminToken}\r\n` +
        `Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body);
    socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
    try {
      await waitFor(() => /HTTP\/1\.1 200[^]*"success":true/.test(texts.join('')), {
        timeoutMs: 5000,
        what: 'the answer to the request after the drained body',
        seen: () => texts.join(''),
      });
    } finally {
      socket.destroy();
    }
    const all = texts.join('');
    expect(all).toMatch(/^HTTP\/1\.1 404 /);
    expect(all).toMatch(/HTTP\/1\.1 200 OK/);
  });
}
