// Part of test/http.e2e-spec.ts: early answers to Node's fetch in another process.
import {
  type RemoteAnswer,
  remoteFetch,
  type RemotePart,
  type RemoteRequest,
} from '../../support/remote-fetch.js';
import {
  type EarlyAnswerContext,
  expectEnvelope,
  MISSING_USER,
  ROUNDS,
  TOO_LARGE,
  TWO_MIB,
  UNSUPPORTED,
} from './context.js';

export function nodeFetchTests(ctx: EarlyAnswerContext): void {
  const { app, given } = ctx;

  describe('Node fetch in another process, each request sent a few times', () => {
    const png = (size: number) => ({ size, png: true });
    const bodies: [string, RemotePart[]][] = [
      ['a PNG under another field name', [{ name: 'picture', filename: 'a.png', ...png(4096) }]],
      [
        'two files',
        [
          { name: 'file', filename: 'a.png', ...png(4096) },
          { name: 'file', filename: 'b.png', ...png(4096) },
        ],
      ],
      ['a text file', [{ name: 'file', filename: 'a.txt', type: 'text/plain', size: 120_000 }]],
      ['2 MiB + 1 byte', [{ name: 'file', filename: 'big.png', ...png(TWO_MIB + 1) }]],
      ['exactly 2 MiB', [{ name: 'file', filename: 'big.png', ...png(TWO_MIB) }]],
      ['a small PNG', [{ name: 'file', filename: 'a.png', ...png(4096) }]],
      ['a 6 MiB file', [{ name: 'file', filename: 'huge.png', ...png(3 * TWO_MIB) }]],
    ];
    const avatar =
      (userId: () => number, token: () => string | undefined) =>
      (parts: RemotePart[]) =>
      (): RemoteRequest => ({
        url: `${app.url}/api/users/${userId()}/avatar`,
        method: 'PUT',
        headers: token() ? { authorization: `Bearer ${token()}` } : {},
        parts,
      });
    const json = (method: string, path: string, type: string) => () => ({
      url: app.url + path,
      method,
      headers: { authorization: `Bearer ${given.adminToken}`, 'content-type': type },
      size: 3 * TWO_MIB,
    });
    const cases: [string, () => RemoteRequest, number, string][] = [
      ...bodies.map(([name, parts]): [string, () => RemoteRequest, number, string] => [
        `PUT avatar of an unknown user with ${name}`,
        avatar(
          () => MISSING_USER,
          () => given.adminToken,
        )(parts),
        404,
        'User not found',
      ]),
      ...bodies.map(([name, parts]): [string, () => RemoteRequest, number, string] => [
        `PUT avatar without a token with ${name}`,
        avatar(
          () => given.user.id,
          () => undefined,
        )(parts),
        401,
        'Authentication required',
      ]),
      ...bodies.map(([name, parts]): [string, () => RemoteRequest, number, string] => [
        `PUT avatar by a non-admin with ${name}`,
        avatar(
          () => given.user.id,
          () => given.userToken,
        )(parts),
        403,
        'You do not have permission to perform this action',
      ]),
      [
        'PUT avatar with 6 MiB of octet-stream',
        json('PUT', '/api/users/1/avatar', 'application/octet-stream'),
        415,
        'Unsupported content type',
      ],
      ...['POST /api/modules', 'PUT /api/modules/1', 'POST /api/users/bulk', 'POST /api/auth/login'].map(
        (route): [string, () => RemoteRequest, number, string] => {
          const [method, path] = route.split(' ');
          return [`${route} with 6 MiB of JSON`, json(method, path, 'application/json'), 413, TOO_LARGE];
        },
      ),
      ['POST /api/modules with 6 MiB of text', json('POST', '/api/modules', 'text/plain'), 415, UNSUPPORTED],
      [
        'POST /api/modules/1/students with 6 MiB of a form',
        json('POST', '/api/modules/1/students', 'application/x-www-form-urlencoded'),
        415,
        UNSUPPORTED,
      ],
    ];
    let answers: RemoteAnswer[][] = [];

    beforeAll(async () => {
      // One client process for every request: starting Node is the slow part on a busy machine.
      const flat = await remoteFetch(cases.flatMap(([, build]) => Array.from({ length: ROUNDS }, build)));
      answers = cases.map((_, index) => flat.slice(index * ROUNDS, (index + 1) * ROUNDS));
    });

    it.each(cases.map(([name, , status, message], index) => [name, status, message, index] as const))(
      '%s answers %i',
      (_name, status, message, index) => {
        expect(answers[index]).toHaveLength(ROUNDS);
        for (const res of answers[index]) {
          expect(res.error).toBeUndefined();
          expect(res.status).toBe(status);
          expectEnvelope(res.body, message);
        }
      },
    );
  });
}
