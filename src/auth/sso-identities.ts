import { Inject, Injectable } from '@nestjs/common';
import { type JWTPayload } from 'jose';
import { type RequestContext } from '../audit/audit-actions.js';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { InvalidToken } from '../core/errors.js';
import { isUserEmail, USERNAME_PATTERN } from '../users/user-rules.js';
import { type SsoCandidate, UsersRepository } from '../users/users.repository.js';
import { type AuthUser } from '../core/decorators.js';
import { type UserAccount } from '../users/user.shape.js';
import { UsersService } from '../users/users.service.js';
import { LinkWithPassword, NoAccountForIdentity } from './auth.errors.js';
import { IdpTokens } from './idp-tokens.js';

/** A unique violation: the identity was bound to another user meanwhile. */
const isUniqueViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === '23505';

const isBoundTo = (candidate: SsoCandidate, iss: string, sub: string) =>
  candidate.ssoIssuer === iss && candidate.ssoSubject === sub;

/**
 * The local user an IdP token speaks for (docs/sso.md): the user whose `external_id` equals the token's
 * OIDC_EXTERNAL_ID_CLAIM when that is set; otherwise the user bound to the token's `(iss, sub)`; otherwise the
 * user whose username equals the username claim (ASCII case-insensitively: a claim that breaks the username rule
 * names nobody), which the token then binds; otherwise one created on first sight when OIDC_CREATE_USERS is on.
 * An admin is reached only through their binding: never by the username or external id claim of a token whose
 * `(iss, sub)` is not theirs, and never bound at first sight. Rights are never read from the token.
 */
@Injectable()
export class SsoIdentities {
  /** Creations in progress in this process, by lower-cased username: concurrent first requests share one. */
  private readonly creating = new Map<string, Promise<number>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersRepository,
    private readonly writer: UsersService,
    private readonly idp: IdpTokens,
  ) {}

  /**
   * The local user's id; 401 for a token without a `sub` or a usable username claim, 403 when nobody may be
   * named (no such user, a user bound to another `sub`, a username the rule refuses).
   */
  async userIdFor(claims: JWTPayload, context: RequestContext): Promise<number> {
    const settings = this.config.oidc!;
    const { iss, sub } = claims;
    const username = claims[settings.usernameClaim];
    if (typeof iss !== 'string' || typeof sub !== 'string' || sub === '') throw new InvalidToken();
    if (typeof username !== 'string' || username === '') throw new InvalidToken();
    // OIDC_EXTERNAL_ID_CLAIM (Entra ID's `oid`, provisioned by SCIM as externalId) names the user first; such a
    // match neither needs nor changes a binding.
    const externalId = settings.externalIdClaim === undefined ? undefined : claims[settings.externalIdClaim];
    if (typeof externalId === 'string' && externalId !== '') {
      const provisioned = await this.users.ssoCandidateByExternalId(externalId);
      if (provisioned !== null) {
        // An admin is reached only through their own binding, never through a claim the IdP or SCIM can set.
        if (provisioned.admin && !isBoundTo(provisioned, iss, sub)) throw new NoAccountForIdentity();
        return Number(provisioned.id);
      }
    }
    const bound = await this.users.idBySsoIdentity(iss, sub);
    if (bound !== null) return bound;
    // Checked before any lookup: PostgreSQL's lower() folds U+0130 and the Kelvin sign onto ASCII letters.
    if (!USERNAME_PATTERN.test(username)) throw new NoAccountForIdentity();
    const candidate = await this.users.ssoCandidateByUsername(username);
    if (candidate !== null) return this.bind(candidate, iss, sub);
    if (!settings.createUsers) throw new NoAccountForIdentity();
    const key = username.toLowerCase();
    let creation = this.creating.get(key);
    if (!creation) {
      creation = this.create(username, claims, iss, sub, context).finally(() => this.creating.delete(key));
      this.creating.set(key, creation);
    }
    return creation;
  }

  /**
   * The first token that reaches an unbound active user binds it; a user bound to another identity is refused,
   * and an inactive one is refused like a deleted one without being bound (a username the IdP hands to someone
   * else meanwhile must not own the account once it is reactivated).
   */
  private async bind(candidate: SsoCandidate, iss: string, sub: string): Promise<number> {
    const id = Number(candidate.id);
    if (!candidate.active) throw new InvalidToken();
    if (candidate.ssoSubject !== null) {
      if (isBoundTo(candidate, iss, sub)) return id;
      throw new NoAccountForIdentity();
    }
    // No admin is bound at first sight: whoever's token came first would own the account (docs/sso.md).
    if (candidate.admin) throw new NoAccountForIdentity();
    try {
      if (await this.writer.bindSsoIdentity(id, iss, sub)) return id;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    // Bound meanwhile, by a concurrent request: to this identity (fine) or another one (refused).
    if ((await this.users.idBySsoIdentity(iss, sub)) === id) return id;
    throw new NoAccountForIdentity();
  }

  /**
   * `POST /api/auth/sso-binding`: binds the caller, signed in with this service's own token, to the `(iss, sub)`
   * of an IdP token they hold. With an IdP token as the caller's own credential it is refused: whoever controls
   * the IdP could then link any identity to an account they reached.
   */
  async linkOwn(caller: AuthUser, token: string, context: RequestContext): Promise<UserAccount> {
    if (caller.idp) throw new LinkWithPassword();
    const { iss, sub } = await this.idp.verify(token);
    if (typeof iss !== 'string' || typeof sub !== 'string' || sub === '') throw new InvalidToken();
    return this.writer.setSsoBinding(String(caller.id), iss, sub, context);
  }

  /**
   * Whether a remembered token's user may still be reached by it as an admin: only through the admin's binding to
   * the token's `(iss, sub)` (a user matched by the external id claim, then promoted, is not).
   */
  async reachesAdmin(userId: number, iss: string, sub: string): Promise<boolean> {
    return (await this.users.idBySsoIdentity(iss, sub)) === userId;
  }

  private async create(
    username: string,
    claims: JWTPayload,
    iss: string,
    sub: string,
    context: RequestContext,
  ): Promise<number> {
    const { email } = claims;
    // A username or email this service would refuse from an administrator is not created from a token either,
    // nor an address the IdP says it has not verified.
    if (claims.email_verified === false || !isUserEmail(email)) throw new NoAccountForIdentity();
    const created = await this.writer.insertUnlessTaken(
      {
        username,
        email: email.toLowerCase(),
        passwordHash: null,
        admin: false,
        ssoIssuer: iss,
        ssoSubject: sub,
      },
      { context: { ...context, actorId: null }, via: { via: 'sso' } },
    );
    if (created) return Number(created.id);
    // Another process created this user meanwhile (and bound it), or the username or email is taken.
    const id = await this.users.idBySsoIdentity(iss, sub);
    if (id === null) throw new NoAccountForIdentity();
    return id;
  }
}
