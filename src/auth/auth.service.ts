import { Inject, Injectable } from '@nestjs/common';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { AuthenticationRequired } from '../core/errors.js';
import { toUserAccount } from '../users/user.mapper.js';
import { type UserAccount } from '../users/user.shape.js';
import { UsersRepository } from '../users/users.repository.js';
import { UsersService } from '../users/users.service.js';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import {
  InvalidCredentials,
  SingleSignOnAccount,
  TooManyLoginAttempts,
  WrongCurrentPassword,
} from './auth.errors.js';
import { IdpTokens } from './idp-tokens.js';
import { Metrics } from '../observability/metrics.js';
import { type ChangePasswordDto } from './dto/change-password.dto.js';
import { type LoginDto } from './dto/login.dto.js';
import { type LoginAttempt, LoginThrottle } from './login-throttle.js';
import { USERNAME_PATTERN } from '../users/user-rules.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { type IssuedToken, TokenService } from './token.service.js';

/**
 * How long an attempt waits for a place while the throttle's counters are full of attempts in flight (a burst of
 * logins from one address): long enough for many rounds of password checks, short of a client's patience.
 */
const ADMIT_WAIT_MS = 10_000;

export interface Session extends IssuedToken {
  user: UserAccount;
}

/** `GET /api/auth/config`: how a web client signs people in. */
export interface SignInOptions {
  password_login: boolean;
  sso: {
    issuer: string;
    client_id: string | null;
    scopes: string[];
    authorization_endpoint: string | null;
    token_endpoint: string | null;
  } | null;
}

@Injectable()
export class AuthService {
  // Each collaborator typed as what is used of it (injected by its class), so a unit test can fake it.
  constructor(
    @Inject(UsersRepository)
    private readonly users: Pick<UsersRepository, 'findByUsername' | 'findById'>,
    @Inject(PasswordHasher) private readonly hasher: Pick<PasswordHasher, 'verify' | 'hash'>,
    @Inject(TokenService) private readonly tokens: Pick<TokenService, 'issue'>,
    private readonly throttle: LoginThrottle,
    @Inject(AuditService) private readonly audit: Pick<AuditService, 'record'>,
    @Inject(Metrics) private readonly metrics: Pick<Metrics, 'loginThrottled'>,
    @Inject(IdpTokens) private readonly idp: Pick<IdpTokens, 'idpEndpoints'>,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'oidc' | 'passwordLogin'>,
    @Inject(UsersService) private readonly writer: Pick<UsersService, 'setPassword'>,
  ) {}

  async signInOptions(): Promise<SignInOptions> {
    const settings = this.config.oidc;
    if (!settings) return { password_login: this.config.passwordLogin, sso: null };
    const endpoints = await this.idp.idpEndpoints();
    return {
      password_login: this.config.passwordLogin,
      sso: {
        issuer: settings.issuer,
        client_id: settings.clientId ?? null,
        scopes: settings.scopes,
        authorization_endpoint: endpoints?.authorizationEndpoint ?? null,
        token_endpoint: endpoints?.tokenEndpoint ?? null,
      },
    };
  }

  /**
   * Refuses a login (429) when the username's or the address's counter is full, before its body is validated
   * (the throttle guard). The first refusal of a throttling window per key is audited.
   */
  async refuseIfThrottled(username: string | undefined, context: RequestContext): Promise<void> {
    if (await this.throttle.isBlocked(username, context.clientIp ?? ''))
      await this.refuseThrottled(username, context);
  }

  private async refuseThrottled(username: string | undefined, context: RequestContext): Promise<never> {
    this.metrics.loginThrottled();
    for (const key of await this.throttle.newlyBlocked(username, context.clientIp ?? ''))
      await this.audit.record(undefined, context, {
        action: 'auth.login_throttled',
        targetType: null,
        targetIds: [],
        summary: { key },
      });
    throw new TooManyLoginAttempts();
  }

  /**
   * A place in both counters for an attempt of this username from this address, reserved before its password is
   * checked, so a burst of concurrent wrong attempts never gets more than 10 of them verified (login-throttle.ts).
   * While the counters are full of attempts in flight it waits for one to end, up to {@link ADMIT_WAIT_MS}; 429
   * once they are full of failures, or when the wait runs out.
   */
  private async admit(username: string, context: RequestContext): Promise<LoginAttempt> {
    const clientIp = context.clientIp ?? '';
    const deadline = Date.now() + ADMIT_WAIT_MS;
    let attempt = await this.throttle.admit(username, clientIp);
    while (attempt === 'busy' && Date.now() < deadline) {
      await this.throttle.settled(deadline - Date.now());
      attempt = await this.throttle.admit(username, clientIp);
    }
    if (attempt === 'busy' || attempt === 'throttled') return this.refuseThrottled(username, context);
    return attempt;
  }

  async login({ username, password }: LoginDto, context: RequestContext): Promise<Session> {
    const attempt = await this.admit(username, context);
    let failed = false;
    try {
      // No stored username holds a NUL (PostgreSQL text cannot) or breaks the username rule: such a login simply
      // fails. The rule is checked before the lookup, since PostgreSQL's lower() folds U+0130 and the Kelvin sign
      // onto ASCII letters and would find `admin` for "admİn".
      const user =
        username.includes('\u0000') || !USERNAME_PATTERN.test(username)
          ? null
          : await this.users.findByUsername(username);
      // An unknown username is verified against a decoy hash, so both failures take the same time.
      // A user created by single sign-on has no password: verified against the decoy, like an unknown username.
      const valid = await this.hasher.verify(user?.passwordHash ?? undefined, password);
      // An inactive user (docs/api.md §14) fails like a wrong password, after the same work.
      if (!user || !valid || !user.active) {
        failed = true;
        await this.audit.record(undefined, context, {
          action: 'auth.login_failed',
          targetType: user ? 'user' : null,
          targetIds: user ? [user.id] : [],
          // jsonb cannot hold U+0000 either.
          summary: { username: username.replaceAll('\u0000', '\uFFFD') },
        });
        throw new InvalidCredentials();
      }
      return { ...this.tokens.issue(user), user: toUserAccount(user) };
    } finally {
      // A wrong password turns its place into a failure; anything else (success, a database error) frees it.
      if (failed) await this.throttle.fail(attempt);
      else await this.throttle.release(attempt);
    }
  }

  async me(userId: number): Promise<UserAccount> {
    const user = await this.users.findById(userId);
    if (!user) throw new AuthenticationRequired();
    return toUserAccount(user);
  }

  /**
   * Not a second login: with PASSWORD_LOGIN=false the route answers 403 before this (PasswordLoginGuard), and a
   * wrong current password counts as a failed login for the user's username and the client's address (§2's
   * throttle), so a token is no unthrottled oracle for the password.
   */
  async changePassword(userId: number, dto: ChangePasswordDto, context: RequestContext): Promise<Session> {
    const user = await this.users.findById(userId);
    if (!user) throw new AuthenticationRequired();
    if (user.passwordHash === null) throw new SingleSignOnAccount();
    const attempt = await this.admit(user.username, context);
    let valid: boolean;
    try {
      valid = await this.hasher.verify(user.passwordHash, dto.current_password);
    } catch (error) {
      await this.throttle.release(attempt);
      throw error;
    }
    if (!valid) {
      await this.throttle.fail(attempt);
      throw new WrongCurrentPassword();
    }
    await this.throttle.release(attempt);
    const passwordHash = await this.hasher.hash(dto.new_password);
    // Taken after the slow hash: a token issued meanwhile is never in a later second than the change.
    const changedAt = new Date();
    const updated = await this.writer.setPassword(userId, passwordHash, changedAt, context);
    if (!updated) throw new AuthenticationRequired();
    return { ...this.tokens.issue(updated, changedAt), user: toUserAccount(updated) };
  }
}
