import { Inject, Injectable } from '@nestjs/common';
import { isEmail } from 'class-validator';
import { type JWTPayload } from 'jose';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { InvalidToken } from '../core/errors.js';
import { Transactions } from '../database/transactions.js';
import { ChangeEventsService } from '../events/change-events.service.js';
import { toUserAccount } from '../users/user.mapper.js';
import { USERNAME_PATTERN } from '../users/user-rules.js';
import { UsersRepository } from '../users/users.repository.js';
import { NoAccountForIdentity } from './auth.errors.js';

/**
 * The local user an IdP token speaks for (docs/sso.md): the user whose username equals the username claim,
 * case-insensitively, created on first sight when OIDC_CREATE_USERS is on. Rights are never read from the token.
 */
@Injectable()
export class SsoIdentities {
  /** Creations in progress in this process, by lower-cased username: concurrent first requests share one. */
  private readonly creating = new Map<string, Promise<number>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly changeEvents: ChangeEventsService,
  ) {}

  /** The local user's id; 401 for a token without a usable username claim, 403 when nobody may be named. */
  async userIdFor(claims: JWTPayload, context: RequestContext): Promise<number> {
    const settings = this.config.oidc!;
    const username = claims[settings.usernameClaim];
    if (typeof username !== 'string' || username === '') throw new InvalidToken();
    const id = await this.users.idByUsername(username);
    if (id !== null) return id;
    if (!settings.createUsers) throw new NoAccountForIdentity();
    const key = username.toLowerCase();
    let creation = this.creating.get(key);
    if (!creation) {
      creation = this.create(username, claims.email, context).finally(() => this.creating.delete(key));
      this.creating.set(key, creation);
    }
    return creation;
  }

  private async create(username: string, email: unknown, context: RequestContext): Promise<number> {
    // A username or email this service would refuse from an administrator is not created from a token either.
    if (
      !USERNAME_PATTERN.test(username) ||
      typeof email !== 'string' ||
      email.length > 320 ||
      !isEmail(email)
    ) {
      throw new NoAccountForIdentity();
    }
    const created = await this.transactions.run(async (transaction) => {
      const user = await this.users.insertUnlessTaken(
        { username, email: email.toLowerCase(), passwordHash: null, admin: false },
        transaction,
      );
      if (user) {
        await this.audit.record(
          transaction,
          { ...context, actorId: null },
          {
            action: 'user.create',
            targetType: 'user',
            targetIds: [user.id],
            summary: { username: user.username, via: 'sso' },
          },
        );
        await this.changeEvents.record(transaction, [{ type: 'user.created', data: toUserAccount(user) }]);
      }
      return user;
    });
    if (created) return Number(created.id);
    // Another process created this user meanwhile, or the email belongs to someone else.
    const id = await this.users.idByUsername(username);
    if (id === null) throw new NoAccountForIdentity();
    return id;
  }
}
