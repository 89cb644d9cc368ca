// Part of test/http.e2e-spec.ts: early answers on a connection that carried earlier requests.
import { RawConnection } from '../../support/raw-http.js';
import { type EarlyAnswerContext, MISSING_USER } from './context.js';

export function reusedConnectionTests(ctx: EarlyAnswerContext): void {
  const { app, given } = ctx;

  describe('a connection that carried earlier requests', () => {
    const MIB = 1_048_576;
    const avatarHead = (headers: string) =>
      `PUT /api/users/${MISSING_USER}/avatar HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${given.adminToken}\r\n` +
      `Content-Type: multipart/form-data; boundary=xyz\r\n${headers}\r\n`;

    /** Sends an avatar upload the service answers 404 before reading the body, and returns that answer. */
    async function earlyAnswer(connection: RawConnection, size: number, chunked = false) {
      await connection.write(
        avatarHead(chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${size}\r\n`),
      );
      const answer = connection.answer();
      // Written alongside: the answer comes before the body is read.
      const writing = connection.writeBody(size, chunked);
      const result = await answer;
      expect(result.status).toBe(404);
      expect(result.body.message).toBe('User not found');
      return { answer: result, writing };
    }

    /** Runs `test` on a new connection to the service, destroyed afterwards. */
    async function onConnection(test: (connection: RawConnection) => Promise<void>) {
      const connection = await RawConnection.open(app.url);
      try {
        await test(connection);
      } finally {
        connection.destroy();
      }
    }

    /** `rounds` uploads with bodies small enough to drain: every answer keeps the connection. */
    async function drainedUploads(connection: RawConnection, rounds: number) {
      for (let round = 0; round < rounds; round++) {
        const { answer, writing } = await earlyAnswer(connection, 3 * MIB);
        expect(answer.headers.connection).toBe('keep-alive');
        await writing;
      }
    }

    it('a body too large to drain is announced with Connection: close, whatever the connection read before', () =>
      onConnection(async (connection) => {
        // Two bodies small enough to drain: both answers keep the connection, which has now read over 6 MiB.
        await drainedUploads(connection, 2);
        // 8 MiB cannot be drained: the answer must say the connection ends, or a client reuses it as it closes.
        const { answer } = await earlyAnswer(connection, 8 * MIB);
        expect(answer.headers.connection).toBe('close');
        await connection.serverEnd();
      }));

    it('a drainable body after earlier requests is drained and the connection serves the next request', () =>
      onConnection(async (connection) => {
        await drainedUploads(connection, 3);
        await connection.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
        expect((await connection.answer()).status).toBe(200);
      }));

    it('a body without a declared length (chunked) is not waited for: the answer says Connection: close', () =>
      onConnection(async (connection) => {
        const { answer } = await earlyAnswer(connection, 8 * MIB, true);
        expect(answer.headers.connection).toBe('close');
        await connection.serverEnd();
      }));
  });

  it('the service keeps serving after many early answers', async () => {
    const res = await fetch(`${app.url}/api/health`);
    expect(res.status).toBe(200);
  });
}
