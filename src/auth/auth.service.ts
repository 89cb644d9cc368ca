import { Inject, Injectable } from '@nestjs/common';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { Transactions } from '../database/transactions.js';
import { AuthenticationRequired } from '../core/errors.js';
import { toUserSummary, type UserSummary } from '../users/user.mapper.js';
import { UsersRepository } from '../users/users.repository.js';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { InvalidCredentials, SingleSignOnAccount, WrongCurrentPassword } from './auth.errors.js';
import { IdpTokens } from './idp-tokens.js';
import { type ChangePasswordDto } from './dto/change-password.dto.js';
import { type LoginDto } from './dto/login.dto.js';
import { LoginThrottle } from './login-throttle.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { type IssuedToken, TokenService } from './token.service.js';
import { UserAccessCache } from '../users/user-access.cache.js';

export interface Session extends IssuedToken {
  user: UserSummary;
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
  constructor(
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly tokens: TokenService,
    private readonly throttle: LoginThrottle,
    private readonly access: UserAccessCache,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly idp: IdpTokens,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
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

  async login({ username, password }: LoginDto, context: RequestContext): Promise<Session> {
    const clientIp = context.clientIp ?? '';
    // No stored username holds a NUL (PostgreSQL text cannot): such a login simply fails.
    const user = username.includes('\u0000') ? null : await this.users.findByUsername(username);
    // An unknown username is verified against a decoy hash, so both failures take the same time.
    // A user created by single sign-on has no password: verified against the decoy, like an unknown username.
    const valid = await this.hasher.verify(user?.passwordHash ?? undefined, password);
    if (!user || !valid) {
      await this.throttle.recordFailure(username, clientIp);
      await this.audit.record(undefined, context, {
        action: 'auth.login_failed',
        targetType: user ? 'user' : null,
        targetIds: user ? [user.id] : [],
        // jsonb cannot hold U+0000 either.
        summary: { username: username.replaceAll('\u0000', '\uFFFD') },
      });
      throw new InvalidCredentials();
    }
    return { ...this.tokens.issue(user), user: toUserSummary(user) };
  }

  async me(userId: number): Promise<UserSummary> {
    const user = await this.users.findById(userId);
    if (!user) throw new AuthenticationRequired();
    return toUserSummary(user);
  }

  async changePassword(userId: number, dto: ChangePasswordDto, context: RequestContext): Promise<Session> {
    const user = await this.users.findById(userId);
    if (!user) throw new AuthenticationRequired();
    if (user.passwordHash === null) throw new SingleSignOnAccount();
    if (!(await this.hasher.verify(user.passwordHash, dto.current_password)))
      throw new WrongCurrentPassword();
    const changedAt = new Date();
    const passwordHash = await this.hasher.hash(dto.new_password);
    const updated = await this.transactions.run(async (transaction) => {
      const row = await this.users.update(
        String(userId),
        { passwordHash, passwordChangedAt: changedAt, updatedAt: changedAt },
        transaction,
      );
      if (row)
        await this.audit.record(transaction, context, {
          action: 'auth.password_change',
          targetType: 'user',
          targetIds: [userId],
        });
      return row;
    });
    if (!updated) throw new AuthenticationRequired();
    this.access.invalidate(userId);
    return { ...this.tokens.issue(updated, changedAt), user: toUserSummary(updated) };
  }
}
