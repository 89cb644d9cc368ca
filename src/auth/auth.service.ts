import { Injectable } from '@nestjs/common';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { Transactions } from '../database/transactions.js';
import { ChangeEventsService } from '../events/change-events.service.js';
import { AuthenticationRequired } from '../core/errors.js';
import { toUserSummary, type UserSummary } from '../users/user.mapper.js';
import { UsersRepository } from '../users/users.repository.js';
import { InvalidCredentials, WrongCurrentPassword } from './auth.errors.js';
import { type ChangePasswordDto } from './dto/change-password.dto.js';
import { type LoginDto } from './dto/login.dto.js';
import { LoginThrottle } from './login-throttle.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { type IssuedToken, TokenService } from './token.service.js';
import { UserAccessCache } from '../users/user-access.cache.js';

export interface Session extends IssuedToken {
  user: UserSummary;
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
    private readonly changeEvents: ChangeEventsService,
  ) {}

  async login({ username, password }: LoginDto, context: RequestContext): Promise<Session> {
    const clientIp = context.clientIp ?? '';
    // No stored username holds a NUL (PostgreSQL text cannot): such a login simply fails.
    const user = username.includes('\u0000') ? null : await this.users.findByUsername(username);
    // An unknown username is verified against a decoy hash, so both failures take the same time.
    const valid = await this.hasher.verify(user?.passwordHash, password);
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
      if (row) {
        await this.audit.record(transaction, context, {
          action: 'auth.password_change',
          targetType: 'user',
          targetIds: [userId],
        });
        // The User summary's updated_at moved.
        await this.changeEvents.record(transaction, [{ type: 'user.updated', data: toUserSummary(row) }]);
      }
      return row;
    });
    if (!updated) throw new AuthenticationRequired();
    this.access.invalidate(userId);
    return { ...this.tokens.issue(updated, changedAt), user: toUserSummary(updated) };
  }
}
