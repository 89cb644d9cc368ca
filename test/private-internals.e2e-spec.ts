import http from 'node:http';
import { type AddressInfo, Socket } from 'node:net';
import { type ExecutionContext } from '@nestjs/common';
import { AuthGuard, PassportStrategy } from '@nestjs/passport';
import passport from 'passport';
import { Strategy as JwtStrategyBase } from 'passport-jwt';
import pg from 'pg';
import QueryStream from 'pg-query-stream';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../ormconfig.js';
import { helmetHeaders } from '../src/http/security-headers.js';
import { discardConnection } from '../src/database/bounded-client.js';
import { preparedQuery } from '../src/database/prepared.js';
import { testDatabaseUrl } from './support/app.js';

/**
 * The private internals of dependencies the code relies on (docs/decisions.md, "Private internals we rely on"):
 * each test fails when the installed version no longer has one in the shape the code expects.
 */
describe('private internals the code relies on', () => {
  describe('TypeORM and node-postgres', () => {
    let dataSource: DataSource;

    beforeAll(async () => {
      dataSource = await new DataSource(dataSourceOptions(testDatabaseUrl(), 2)).initialize();
    });
    afterAll(() => dataSource.destroy());

    it("TypeORM's postgres driver keeps its pg.Pool as `driver.master` (prepared.ts, metrics.ts)", async () => {
      const master = (dataSource.driver as unknown as { master: unknown }).master;
      expect(master).toBeInstanceOf(pg.Pool);
      const pool = master as pg.Pool & { options: { max: number } };
      expect(typeof pool.query).toBe('function');
      // The pool gauges read these.
      expect(pool.options.max).toBe(2);
      for (const count of [pool.totalCount, pool.idleCount, pool.waitingCount])
        expect(typeof count).toBe('number');
      expect(await preparedQuery(dataSource, 'SELECT $1::int AS one', [1])).toEqual([{ one: 1 }]);
    });

    it('pg-pool drops a released client whose `_queryable` is false; its `connection.stream` is the socket (bounded-client.ts)', async () => {
      const pool = (dataSource.driver as unknown as { master: pg.Pool }).master;
      const client = await pool.connect();
      const internals = client as unknown as { _queryable: unknown; connection?: { stream?: unknown } };
      expect(internals._queryable).toBe(true);
      expect(internals.connection?.stream).toBeInstanceOf(Socket);
      const before = pool.totalCount;
      // The flag alone, socket still open: the pool must read it when the client comes back.
      internals._queryable = false;
      client.release();
      expect(pool.totalCount).toBe(before - 1);

      // Both together, as discardConnection does: queries fail at once, the socket is closed.
      const other = await pool.connect();
      discardConnection(other);
      await expect(other.query('SELECT 1')).rejects.toThrow();
      expect((other as unknown as { connection: { stream: Socket } }).connection.stream.destroyed).toBe(true);
      other.release();
    });

    it('pg-query-stream implements `_read` and `_destroy` (query-stream.ts overrides both)', () => {
      expect(typeof QueryStream.prototype._read).toBe('function');
      expect(QueryStream.prototype._read.length).toBe(1);
      expect(typeof QueryStream.prototype._destroy).toBe('function');
      expect(QueryStream.prototype._destroy.length).toBe(2);
    });
  });

  describe('passport', () => {
    it('gives each authentication a copy of the strategy with `success` and `error` on it (jwt.strategy.ts)', async () => {
      const authenticator = new passport.Authenticator();
      const seen: Record<string, string> = {};
      authenticator.use('probe', {
        authenticate(this: Record<string, unknown>) {
          for (const call of ['success', 'error', 'fail']) seen[call] = typeof this[call];
          (this.success as (user: unknown) => void)({ id: 7 });
        },
      } as unknown as passport.Strategy);
      const user = await new Promise((resolve, reject: (error: Error) => void) => {
        const middleware = authenticator.authenticate(
          'probe',
          { session: false },
          (error: Error | null, found: unknown) => (error ? reject(error) : resolve(found)),
        ) as (req: unknown, res: unknown, next: (error?: Error) => void) => void;
        middleware({}, {}, (error) => reject(error ?? new Error('passport called next()')));
      });
      expect(user).toEqual({ id: 7 });
      expect(seen).toEqual({ success: 'function', error: 'function', fail: 'function' });
    });

    it("@nestjs/passport's AuthGuard leaves the user on `request.user` and passport's info on `request.authInfo`, besides passport's session helpers (jwt-auth.guard.ts sets the two for a remembered token)", async () => {
      passport.use('internals-probe', {
        authenticate(this: { success(user: unknown, info?: unknown): void }) {
          this.success({ id: 7 }, { scope: 'probe' });
        },
      } as unknown as passport.Strategy);
      try {
        const request: Record<string, unknown> = {};
        const http = { getRequest: () => request, getResponse: () => ({}), getNext: () => undefined };
        const context = { switchToHttp: () => http } as unknown as ExecutionContext;
        const Guard = AuthGuard('internals-probe');
        expect(await new Guard().canActivate(context)).toBe(true);
        expect(request).toMatchObject({ user: { id: 7 }, authInfo: { scope: 'probe' } });
        // Besides those two, only passport's session helpers, which the service never calls (the remembered
        // path does not add them).
        const helpers = [
          '_sessionManager',
          'isAuthenticated',
          'isUnauthenticated',
          'logIn',
          'logOut',
          'login',
          'logout',
        ];
        expect(
          Object.keys(request)
            .filter((key) => !helpers.includes(key))
            .sort(),
        ).toEqual(['authInfo', 'user']);
      } finally {
        passport.unuse('internals-probe');
      }
    });

    it('keeps one strategy per name in the process: the last `jwt` registered is the one used', () => {
      const registered = passport as unknown as { _strategy(name: string): unknown };
      const previous = registered._strategy('jwt');
      const options = { jwtFromRequest: () => null, secretOrKey: 'x'.repeat(32) };
      class First extends PassportStrategy(JwtStrategyBase) {
        validate(): unknown {
          return null;
        }
      }
      class Second extends PassportStrategy(JwtStrategyBase) {
        validate(): unknown {
          return null;
        }
      }
      try {
        const first = new First(options);
        expect(registered._strategy('jwt')).toBe(first);
        const second = new Second(options);
        // A second service built in the same process takes over authentication for the first.
        expect(registered._strategy('jwt')).toBe(second);
      } finally {
        if (previous) passport.use('jwt', previous as passport.Strategy);
        else passport.unuse('jwt');
      }
    });
  });

  describe("Node's HTTP server", () => {
    it('ends a `Connection: close` answer with `socket.destroySoon()`, and names the answer `_httpMessage` (early-answers.ts, request-timeout.ts)', async () => {
      expect(typeof Socket.prototype.destroySoon).toBe('function');
      expect(Socket.prototype.destroySoon.length).toBe(0);
      let inFlightIsAnswer = false;
      const server = http.createServer((request, response) => {
        const socket = request.socket as Socket & { _httpMessage?: unknown };
        inFlightIsAnswer = socket._httpMessage === response;
        response.setHeader('connection', 'close');
        response.end('bye');
      });
      let calledDestroySoon!: () => void;
      const destroySoonCalled = new Promise<void>((resolve) => (calledDestroySoon = resolve));
      server.on('connection', (socket: Socket) => {
        const original = socket.destroySoon.bind(socket);
        socket.destroySoon = () => {
          calledDestroySoon();
          original();
        };
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const answer = await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } });
        expect(await answer.text()).toBe('bye');
        await destroySoonCalled;
        expect(inFlightIsAnswer).toBe(true);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });

  describe('helmet', () => {
    it('sets its headers synchronously through setHeader/removeHeader only (security-headers.ts)', () => {
      const headers = helmetHeaders({});
      expect(headers['x-content-type-options']).toBe('nosniff');
      expect(headers['content-security-policy']).toEqual(expect.any(String));
    });
  });
});
