import { Injectable } from '@nestjs/common';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { Clock } from '../core/clock.js';
import { ValidationFailed } from '../core/errors.js';
import { Transactions } from '../database/transactions.js';
import { type CreateTokenDto } from './dto/create-token.dto.js';
import { IntegrationTokenCheck } from './integration-token.check.js';
import { toTokenResponse, type TokenResponse } from './token.mapper.js';
import { TokenNotFound } from './token.errors.js';
import { EXPIRES_AT_MESSAGE, normaliseScopes, parseRfc3339 } from './token-rules.js';
import { newTokenText, tokenHash } from './token-text.js';
import { TokensRepository } from './tokens.repository.js';

/** Integration tokens: created, listed and revoked by administrators (docs/api.md §14). */
@Injectable()
export class TokensService {
  constructor(
    private readonly tokens: TokensRepository,
    private readonly check: IntegrationTokenCheck,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  async create(dto: CreateTokenDto, context: RequestContext): Promise<TokenResponse & { token: string }> {
    let expiresAt: Date | null = null;
    if (dto.expires_at !== undefined && dto.expires_at !== null) {
      expiresAt = parseRfc3339(dto.expires_at);
      if (expiresAt === null || expiresAt.getTime() <= this.clock.now())
        throw new ValidationFailed(EXPIRES_AT_MESSAGE);
    }
    const token = newTokenText();
    const scopes = normaliseScopes(dto.scopes);
    const row = await this.transactions.run(async (transaction) => {
      const created = await this.tokens.insert(
        { name: dto.name, scopes, tokenHash: tokenHash(token), expiresAt },
        transaction,
      );
      await this.audit.record(transaction, context, {
        action: 'token.create',
        targetType: 'token',
        targetIds: [created.id],
        summary: { name: created.name, scopes: created.scopes },
      });
      return created;
    });
    return { ...toTokenResponse(row), token };
  }

  async list(): Promise<TokenResponse[]> {
    return (await this.tokens.listActive()).map(toTokenResponse);
  }

  async revoke(id: string, context: RequestContext): Promise<void> {
    const revoked = await this.transactions.run(async (transaction) => {
      const row = await this.tokens.revoke(id, transaction);
      if (!row) throw new TokenNotFound();
      await this.audit.record(transaction, context, {
        action: 'token.revoke',
        targetType: 'token',
        targetIds: [row.id],
        summary: { name: row.name, scopes: row.scopes },
      });
      return row;
    });
    // This replica refuses it at once; the others within their cache bound (5 s).
    this.check.forget(Number(revoked.id));
  }
}
