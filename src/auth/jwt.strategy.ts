import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { type IncomingHttpHeaders } from 'node:http';
import { LRUCache } from 'lru-cache';
import { Strategy } from 'passport-jwt';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { Clock } from '../core/clock.js';
import { type AuthUser } from '../core/decorators.js';
import { InvalidToken } from '../core/errors.js';
import { type BearerRequest, type RememberedBearer } from '../core/remembered-bearer.js';
import { NoAccountForIdentity } from './auth.errors.js';
import { bearerToken } from './bearer-token.js';
import { IDP_CLOCK_TOLERANCE_S, IdpTokens } from './idp-tokens.js';
import { jwtKey } from './jwt-key.js';
import { SsoIdentities } from './sso-identities.js';
import { UserAccessCache } from '../users/user-access.cache.js';
import { IntegrationTokenCheck } from '../tokens/integration-token.check.js';
import { TOKEN_PREFIX } from '../tokens/token-text.js';

interface Claims {
  sub?: unknown;
  admin?: unknown;
  iat?: unknown;
  exp?: unknown;
}

/** Tokens whose signature and claims were verified, at most this many (the least recently used is dropped). */
const VERIFIED_TOKENS_MAX = 10_000;

/**
 * A verified IdP token: the local user it speaks for, until when (seconds, clock tolerance included), and its
 * `(iss, sub)`, checked against the user's binding while the user is an admin.
 */
interface IdpGrant {
  userId: number;
  until: number;
  iss: string;
  sub: string;
}

/** The passport strategy's own calls on the per-request object passport makes for it. */
interface StrategyCalls {
  success(user: AuthUser): void;
  error(error: unknown): void;
}

/**
 * The one bearer strategy: a token whose unverified `iss` is OIDC_ISSUER is an IdP token (jose, the IdP's keys,
 * then the local user it names); every other token is the service's own HS256 token (passport-jwt).
 *
 * A token verified before is remembered, and the JWT guard asks {@link remembered} first, so a client's
 * every-request token skips passport's per-request context (core/remembered-bearer.ts).
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') implements RememberedBearer {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly access: UserAccessCache,
    private readonly idp: IdpTokens,
    private readonly identities: SsoIdentities,
    private readonly clock: Clock,
    private readonly integrationTokens: IntegrationTokenCheck,
  ) {
    super({
      jwtFromRequest: bearerToken,
      // The typings say string | Buffer; jsonwebtoken takes a KeyObject too (see jwt-key.ts).
      secretOrKey: jwtKey(config.jwtSecret!) as unknown as Buffer,
      algorithms: ['HS256'],
      ignoreExpiration: false,
      passReqToCallback: true,
    });
  }

  /**
   * Verified tokens and their claims. A client sends the same token with every request for its lifetime, and
   * verifying it again (jsonwebtoken) cost about a sixth of a cheap request's CPU. The key is the whole token,
   * signature included, so only the exact bytes verified before can hit; expiry is checked again on each hit,
   * and the user re-check (deleted, demoted, password changed) runs on every request as before.
   */
  private readonly verified = new LRUCache<string, Claims>({ max: VERIFIED_TOKENS_MAX });

  /** Verified IdP tokens, remembered under the same rules (whole token as key, expiry re-checked, user re-checked). */
  private readonly idpGrants = new LRUCache<string, IdpGrant>({ max: VERIFIED_TOKENS_MAX });

  private nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  /**
   * The caller of a request whose token was verified before (core/remembered-bearer.ts), or undefined: no token,
   * an unknown one, or an IdP token whose grant ran out (verified afresh through passport).
   */
  remembered(request: BearerRequest): Promise<AuthUser> | undefined {
    const token = bearerToken(request);
    if (token === null) return undefined;
    // An integration token (docs/api.md §14) is no JWT: checked by its hash, never by passport.
    if (token.startsWith(TOKEN_PREFIX)) return this.integrationTokens.caller(token);
    const claims = this.verified.get(token);
    if (claims !== undefined) {
      if (typeof claims.exp === 'number' && this.nowSeconds() >= claims.exp) {
        // What passport-jwt answers for an expired token (jsonwebtoken's TokenExpiredError): 401.
        this.verified.delete(token);
        return Promise.reject(new InvalidToken());
      }
      return this.validate(request, claims);
    }
    const grant = this.idp.enabled ? this.idpGrants.get(token) : undefined;
    if (grant !== undefined && this.nowSeconds() < grant.until) return this.idpUser(grant);
    return undefined;
  }

  admitted(caller: AuthUser): Promise<void> | undefined {
    return caller.integration && this.integrationTokens.used(caller.integration.tokenId);
  }

  override authenticate(request: Parameters<Strategy['authenticate']>[0], options?: unknown): void {
    const calls = this as unknown as StrategyCalls;
    const answer = this.remembered(request as BearerRequest);
    if (answer !== undefined) {
      answer.then(
        (user) => calls.success(user),
        (error: unknown) => calls.error(error),
      );
      return;
    }
    const token = bearerToken(request);
    if (token !== null && this.idp.enabled && this.idp.claimsIdpIssuer(token)) {
      this.authenticateIdp(token, request as BearerRequest).then(
        (user) => calls.success(user),
        (error: unknown) => calls.error(error),
      );
      return;
    }
    // Unknown: passport-jwt verifies it (and reports a missing token or an expiry).
    super.authenticate(request, options);
  }

  private async authenticateIdp(token: string, request: BearerRequest): Promise<AuthUser> {
    this.idpGrants.delete(token);
    const claims = await this.idp.verify(token);
    const userId = await this.identities.userIdFor(claims, {
      actorId: null,
      requestId: request.id ?? null,
      clientIp: request.ip ?? null,
    });
    // userIdFor refused a token without a string `iss` and `sub`.
    const grant = { userId, until: claims.exp + IDP_CLOCK_TOLERANCE_S, iss: claims.iss!, sub: claims.sub! };
    this.idpGrants.set(token, grant);
    return this.idpUser(grant);
  }

  private async idpUser(grant: IdpGrant): Promise<AuthUser> {
    // Rights come from the local user alone; a password change here does not end the IdP's sessions.
    const user = await this.access.get(grant.userId);
    if (!user) throw new InvalidToken();
    // Made an admin since the token was verified: from now on only the admin's own binding reaches them.
    if (user.admin && !(await this.identities.reachesAdmin(grant.userId, grant.iss, grant.sub)))
      throw new NoAccountForIdentity();
    return { id: grant.userId, admin: user.admin, idp: true };
  }

  async validate(request: { headers: IncomingHttpHeaders }, claims: Claims): Promise<AuthUser> {
    // Only reached for a token passport-jwt verified, or one it verified before (remembered above).
    const token = bearerToken(request);
    if (token !== null && !this.verified.has(token)) this.verified.set(token, claims);
    const { sub, admin, iat } = claims;
    if (
      !Number.isSafeInteger(sub) ||
      (sub as number) < 1 ||
      typeof admin !== 'boolean' ||
      typeof iat !== 'number'
    ) {
      throw new InvalidToken();
    }
    const user = await this.access.get(sub as number);
    if (!user || iat < user.passwordChangedAt) throw new InvalidToken();
    return { id: sub as number, admin: admin && user.admin };
  }
}
