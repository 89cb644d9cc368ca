import { JwtService } from '@nestjs/jwt';
import { DataSource } from 'typeorm';
import { type RequestContext } from '../audit/audit-actions.js';
import { type AppConfig } from '../config/app-config.js';
import { type Transaction } from '../database/transactions.js';
import { Metrics } from '../observability/metrics.js';
import {
  DEFAULT_CONFIG,
  fakeWritePath,
  NO_DATABASE,
  unconnectedRepository,
  STORED_AT,
  storedUser,
  FakeAccessCache,
  unconnectedUserBulk,
  unconnectedUserList,
  unusedFileStorage,
} from '../testing/fakes.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { User as UserEntity, type User } from '../users/user.entity.js';
import { type UserChanges, UsersRepository } from '../users/users.repository.js';
import { UsersService } from '../users/users.service.js';
import { AuthService } from './auth.service.js';
import { IdpTokens } from './idp-tokens.js';
import { MemoryLoginThrottle } from './login-throttle.js';
import { type IssuedToken, TokenService } from './token.service.js';

/** The transaction the fake opens: a real, unconnected EntityManager, only ever compared by identity. */
const TRANSACTION: Transaction = new DataSource({ type: 'postgres' }).manager;

const CREATED = STORED_AT;

const user = (id: number, username: string, password: string | null, admin = false): User =>
  storedUser(id, username, { passwordHash: password === null ? null : `hash:${password}`, admin });

/** Stored users, looked up as the repository does (username case-insensitively); `failing` makes it throw. */
class FakeUsers extends UsersRepository {
  readonly looked: string[] = [];
  readonly updates: { id: string; changes: UserChanges; manager: Transaction | undefined }[] = [];
  failing = false;
  /** The row is gone when the update runs (deleted meanwhile). */
  deletedBeforeUpdate = false;

  constructor(readonly rows: User[]) {
    super(unconnectedRepository(UserEntity));
  }

  override findByUsername(username: string): Promise<User | null> {
    this.looked.push(username);
    if (this.failing) return Promise.reject(new Error('connection terminated'));
    return Promise.resolve(
      this.rows.find((row) => row.username.toLowerCase() === username.toLowerCase()) ?? null,
    );
  }

  override findById(id: string | number): Promise<User | null> {
    return Promise.resolve(this.rows.find((row) => row.id === Number(id)) ?? null);
  }

  override update(id: string, changes: UserChanges, manager?: Transaction): Promise<User | null> {
    this.updates.push({ id, changes, manager });
    const row = this.rows.find((candidate) => candidate.id === Number(id));
    if (!row || this.deletedBeforeUpdate) return Promise.resolve(null);
    Object.assign(row, changes);
    return Promise.resolve(row);
  }
}

/** A hash is `hash:<password>`; every verification is recorded, the decoy's (no hash) too. */
class FakeHasher extends PasswordHasher {
  verified: (string | undefined)[] = [];

  override hash(password: string): Promise<string> {
    return Promise.resolve(`hash:${password}`);
  }

  override verify(hash: string | undefined, password: string): Promise<boolean> {
    this.verified.push(hash);
    return Promise.resolve(hash !== undefined && hash === `hash:${password}`);
  }
}

class FakeTokens extends TokenService {
  readonly issued: { id: number; issuedAt: Date | undefined }[] = [];

  constructor() {
    super(new JwtService(), DEFAULT_CONFIG);
  }

  override issue(subject: { id: number; admin: boolean }, issuedAt?: Date): IssuedToken {
    this.issued.push({ id: subject.id, issuedAt });
    return { token: `token-${subject.id}-${this.issued.length}`, expires_at: '2026-01-02T00:00:00.000Z' };
  }
}

class FakeMetrics extends Metrics {
  throttled = 0;

  constructor() {
    super(DEFAULT_CONFIG, NO_DATABASE);
  }

  override loginThrottled(): void {
    this.throttled++;
  }
}

class FakeIdp extends IdpTokens {
  constructor() {
    super(DEFAULT_CONFIG);
  }

  override idpEndpoints(): ReturnType<IdpTokens['idpEndpoints']> {
    return Promise.resolve({
      authorizationEndpoint: 'https://idp.example/authorize',
      tokenEndpoint: 'https://idp.example/token',
      jwksUri: 'https://idp.example/jwks',
    });
  }
}

// One hasher for the file: its parent hashes a decoy password with argon2 when it is made.
const hasher = new FakeHasher();

const CONTEXT: RequestContext = { actorId: null, requestId: 'req-1', clientIp: '192.0.2.1' };

function setup(config: Pick<AppConfig, 'oidc' | 'passwordLogin'> = { oidc: undefined, passwordLogin: true }) {
  const users = new FakeUsers([user(7, 'Jane', 'right-password'), user(8, 'sso.only', null)]);
  hasher.verified = [];
  const tokens = new FakeTokens();
  const throttle = new MemoryLoginThrottle();
  const access = new FakeAccessCache();
  const { transactions, audit, events } = fakeWritePath(TRANSACTION);
  const metrics = new FakeMetrics();
  const deps = { users, hasher, tokens, throttle, access, transactions, audit, metrics, events };
  // The writer is the real one on the same fakes: a password change is its transaction, audit and event.
  const writer = new UsersService(
    users,
    unconnectedUserList(),
    unconnectedUserBulk(),
    hasher,
    access,
    unusedFileStorage(),
    transactions,
    audit,
    events,
  );
  const service = new AuthService(
    users,
    hasher,
    tokens,
    throttle,
    audit,
    metrics,
    new FakeIdp(),
    config,
    writer,
  );
  const login = (username: string, password: string, context = CONTEXT) =>
    service.login({ username, password }, context);
  return { service, login, ...deps };
}

describe(AuthService.name, () => {
  describe('login', () => {
    it('answers a session for the right password, the username in any case', async () => {
      const { login, tokens, audit } = setup();
      const session = await login('JANE', 'right-password');
      expect(session).toEqual({
        token: 'token-7-1',
        expires_at: '2026-01-02T00:00:00.000Z',
        user: {
          id: 7,
          username: 'Jane',
          email: 'Jane@example.edu',
          given_name: null,
          family_name: null,
          display_name: null,
          active: true,
          admin: false,
          created_at: CREATED.toISOString(),
          updated_at: CREATED.toISOString(),
          avatar_url: null,
          external_id: null,
        },
      });
      expect(tokens.issued).toEqual([{ id: 7, issuedAt: undefined }]);
      expect(audit.entries).toEqual([]);
    });

    it('refuses a wrong password with 401 and audits the failure against the user', async () => {
      const { login, audit, tokens } = setup();
      await expect(login('jane', 'wrong-password')).rejects.toMatchObject({
        status: 401,
        message: 'Invalid username or password',
      });
      expect(audit.entries).toEqual([
        {
          transaction: undefined,
          context: CONTEXT,
          entry: {
            action: 'auth.login_failed',
            targetType: 'user',
            targetIds: [7],
            summary: { username: 'jane' },
          },
        },
      ]);
      expect(tokens.issued).toEqual([]);
    });

    it('verifies an unknown username and a single sign-on account against the decoy, and refuses both alike', async () => {
      const { login, audit, hasher } = setup();
      await expect(login('nobody', 'any-password')).rejects.toMatchObject({ status: 401 });
      await expect(login('sso.only', 'any-password')).rejects.toMatchObject({ status: 401 });
      expect(hasher.verified).toEqual([undefined, undefined]);
      expect(audit.entries.map(({ entry }) => [entry.targetType, entry.targetIds])).toEqual([
        [null, []],
        ['user', [8]],
      ]);
    });

    it('never looks up a username holding NUL, and audits it without the NUL', async () => {
      const { login, users, audit } = setup();
      await expect(login('ja\u0000ne', 'right-password')).rejects.toMatchObject({ status: 401 });
      expect(users.looked).toEqual([]);
      expect(audit.entries[0].entry.summary).toEqual({ username: 'ja\uFFFDne' });
    });

    it('refuses the eleventh attempt after ten failures with 429, even with the right password', async () => {
      const { login, metrics, audit, throttle } = setup();
      for (let i = 0; i < 10; i++)
        await expect(login('jane', `wrong-${i}`)).rejects.toMatchObject({ status: 401 });
      expect(metrics.throttled).toBe(0);
      await expect(login('jane', 'right-password')).rejects.toMatchObject({
        status: 429,
        message: 'Too many requests, try again later',
      });
      await expect(login('JANE', 'right-password')).rejects.toMatchObject({ status: 429 });
      expect(metrics.throttled).toBe(2);
      // The window's first refusal is audited once per full counter; the second refusal adds nothing.
      expect(audit.entries.slice(10).map(({ entry }) => [entry.action, entry.summary])).toEqual([
        ['auth.login_throttled', { key: 'address' }],
        ['auth.login_throttled', { key: 'username' }],
      ]);
      expect(throttle.isBlocked('jane', '192.0.2.1')).toBe(true);
      // Another username from another address is not held back.
      await expect(login('nobody', 'x', { ...CONTEXT, clientIp: '198.51.100.2' })).rejects.toMatchObject({
        status: 401,
      });
    });

    it('frees the place of a successful attempt and of one that failed for another reason', async () => {
      const { login, users, throttle } = setup();
      for (let i = 0; i < 12; i++) await login('jane', 'right-password');
      users.failing = true;
      for (let i = 0; i < 12; i++)
        await expect(login('jane', 'right-password')).rejects.toThrow('connection terminated');
      users.failing = false;
      expect(throttle.isBlocked('jane', '192.0.2.1')).toBe(false);
      await expect(login('jane', 'right-password')).resolves.toMatchObject({ user: { id: 7 } });
    });
  });

  describe('refuseIfThrottled', () => {
    it('lets a caller through until a counter is full, then refuses with 429 before the body is looked at', async () => {
      const { service, login, metrics } = setup();
      await expect(service.refuseIfThrottled(undefined, CONTEXT)).resolves.toBeUndefined();
      for (let i = 0; i < 10; i++)
        await expect(login(`user${i}`, 'wrong')).rejects.toMatchObject({ status: 401 });
      // The address is full, whatever the username (or none, for a body not read yet).
      await expect(service.refuseIfThrottled(undefined, CONTEXT)).rejects.toMatchObject({ status: 429 });
      await expect(service.refuseIfThrottled('someone-else', CONTEXT)).rejects.toMatchObject({ status: 429 });
      await expect(
        service.refuseIfThrottled('someone-else', { ...CONTEXT, clientIp: '198.51.100.2' }),
      ).resolves.toBeUndefined();
      expect(metrics.throttled).toBe(2);
    });
  });

  describe('changePassword', () => {
    const change = (current: string, next: string) => ({ current_password: current, new_password: next });

    it('stores the new hash, audits it and records the change in one transaction, and issues a fresh token', async () => {
      const { service, users, access, audit, events, tokens, transactions } = setup();
      const before = Date.now();
      const session = await service.changePassword(7, change('right-password', 'a-new-password'), CONTEXT);
      expect(transactions.opened).toBe(1);
      expect(users.updates).toHaveLength(1);
      const [{ id, changes, manager }] = users.updates;
      expect([id, manager]).toEqual(['7', TRANSACTION]);
      expect(changes.passwordHash).toBe('hash:a-new-password');
      expect(changes.passwordChangedAt).toBe(changes.updatedAt);
      expect(changes.passwordChangedAt!.getTime()).toBeGreaterThanOrEqual(before);
      // The token is issued at the change's time, so it is not older than the change.
      expect(tokens.issued).toEqual([{ id: 7, issuedAt: changes.passwordChangedAt }]);
      expect(session.user.updated_at).toBe(changes.updatedAt.toISOString());
      expect(audit.entries).toEqual([
        {
          transaction: TRANSACTION,
          context: CONTEXT,
          entry: { action: 'auth.password_change', targetType: 'user', targetIds: [7] },
        },
      ]);
      expect(events.recorded).toEqual([
        { transaction: TRANSACTION, events: [{ type: 'user.updated', data: session.user }] },
      ]);
      expect(access.invalidated).toEqual([7]);
      // The old password no longer signs in, the new one does.
      await expect(
        service.login({ username: 'jane', password: 'right-password' }, CONTEXT),
      ).rejects.toMatchObject({
        status: 401,
      });
      await expect(
        service.login({ username: 'jane', password: 'a-new-password' }, CONTEXT),
      ).resolves.toBeDefined();
    });

    it('refuses a wrong current password with 401 and changes nothing', async () => {
      const { service, users, access, transactions } = setup();
      await expect(
        service.changePassword(7, change('not-it', 'a-new-password'), CONTEXT),
      ).rejects.toMatchObject({
        status: 401,
        message: 'Current password is incorrect',
      });
      expect([users.updates, access.invalidated, transactions.opened]).toEqual([[], [], 0]);
    });

    it('refuses a single sign-on account with 400, and an unknown or deleted user with 401', async () => {
      const { service, users, access } = setup();
      await expect(service.changePassword(8, change('x', 'a-new-password'), CONTEXT)).rejects.toMatchObject({
        status: 400,
        message: 'This account signs in with single sign-on',
      });
      await expect(service.changePassword(99, change('x', 'a-new-password'), CONTEXT)).rejects.toMatchObject({
        status: 401,
        message: 'Authentication required',
      });
      users.deletedBeforeUpdate = true;
      await expect(
        service.changePassword(7, change('right-password', 'a-new-password'), CONTEXT),
      ).rejects.toMatchObject({ status: 401, message: 'Authentication required' });
      expect(access.invalidated).toEqual([]);
    });
  });

  describe('me and signInOptions', () => {
    it('answers the signed-in user, or 401 for one that is gone', async () => {
      const { service } = setup();
      await expect(service.me(7)).resolves.toMatchObject({ id: 7, username: 'Jane' });
      await expect(service.me(99)).rejects.toMatchObject({ status: 401 });
    });

    it('says whether passwords sign in, and where the identity provider is', async () => {
      expect(await setup({ oidc: undefined, passwordLogin: false }).service.signInOptions()).toEqual({
        password_login: false,
        sso: null,
      });
      const oidc = {
        issuer: 'https://idp.example',
        audience: 'mas',
        usernameClaim: 'preferred_username',
        createUsers: false,
        clientId: undefined,
        scopes: ['openid', 'profile'],
        maxTokenAgeS: 86_400,
        refetchCooldownMs: 30_000,
      };
      expect(await setup({ oidc, passwordLogin: true }).service.signInOptions()).toEqual({
        password_login: true,
        sso: {
          issuer: 'https://idp.example',
          client_id: null,
          scopes: ['openid', 'profile'],
          authorization_endpoint: 'https://idp.example/authorize',
          token_endpoint: 'https://idp.example/token',
        },
      });
    });
  });
});
