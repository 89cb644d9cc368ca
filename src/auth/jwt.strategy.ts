import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { type IncomingHttpHeaders } from 'node:http';
import { Strategy } from 'passport-jwt';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { type AuthUser } from '../core/decorators.js';
import { InvalidToken } from '../core/errors.js';
import { bearerToken } from './bearer-token.js';
import { IDP_CLOCK_TOLERANCE_S, IdpTokens } from './idp-tokens.js';
import { jwtKey } from './jwt-key.js';
import { SsoIdentities } from './sso-identities.js';
import { UserAccessCache } from '../users/user-access.cache.js';

interface Claims {
  sub?: unknown;
  admin?: unknown;
  iat?: unknown;
  exp?: unknown;
}

/** Tokens whose signature and claims were verified, at most this many (the oldest is dropped first). */
const VERIFIED_TOKENS_MAX = 10_000;

/** A verified IdP token: the local user it speaks for, and until when (seconds, clock tolerance included). */
interface IdpGrant {
  userId: number;
  until: number;
}

/** What the strategy reads of the request passport hands it (Fastify's request). */
interface StrategyRequest {
  headers: IncomingHttpHeaders;
  id?: string;
  ip?: string;
}

/** The passport strategy's own calls on the per-request object passport makes for it. */
interface StrategyCalls {
  success(user: AuthUser): void;
  error(error: unknown): void;
}

/**
 * The one bearer strategy: a token whose unverified `iss` is OIDC_ISSUER is an IdP token (jose, the IdP's keys,
 * then the local user it names); every other token is the service's own HS256 token (passport-jwt).
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly access: UserAccessCache,
    private readonly idp: IdpTokens,
    private readonly identities: SsoIdentities,
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
  private readonly verified = new Map<string, Claims>();

  /** Verified IdP tokens, remembered under the same rules (whole token as key, expiry re-checked, user re-checked). */
  private readonly idpGrants = new Map<string, IdpGrant>();

  override authenticate(request: Parameters<Strategy['authenticate']>[0], options?: unknown): void {
    const token = bearerToken(request);
    if (token !== null && this.idp.enabled && !this.verified.has(token)) {
      const grant = this.idpGrants.get(token);
      if (grant !== undefined || this.idp.claimsIdpIssuer(token)) {
        const calls = this as unknown as StrategyCalls;
        this.authenticateIdp(token, grant, request as StrategyRequest).then(
          (user) => calls.success(user),
          (error: unknown) => calls.error(error),
        );
        return;
      }
    }
    const claims = token === null ? undefined : this.verified.get(token);
    const unexpired = typeof claims?.exp !== 'number' || Math.floor(Date.now() / 1000) < claims.exp;
    if (claims === undefined || !unexpired) {
      // Unknown or expired: passport-jwt verifies it (and reports the expiry).
      if (token !== null) this.verified.delete(token);
      super.authenticate(request, options);
      return;
    }
    const calls = this as unknown as StrategyCalls;
    this.validate(request, claims).then(
      (user) => calls.success(user),
      (error: unknown) => calls.error(error),
    );
  }

  private async authenticateIdp(
    token: string,
    remembered: IdpGrant | undefined,
    request: StrategyRequest,
  ): Promise<AuthUser> {
    let grant = remembered;
    if (grant === undefined || Math.floor(Date.now() / 1000) >= grant.until) {
      this.idpGrants.delete(token);
      const claims = await this.idp.verify(token);
      const userId = await this.identities.userIdFor(claims, {
        actorId: null,
        requestId: request.id ?? null,
        clientIp: request.ip ?? null,
      });
      grant = { userId, until: claims.exp + IDP_CLOCK_TOLERANCE_S };
      if (this.idpGrants.size >= VERIFIED_TOKENS_MAX)
        this.idpGrants.delete(this.idpGrants.keys().next().value!);
      this.idpGrants.set(token, grant);
    }
    // Rights come from the local user alone; a password change here does not end the IdP's sessions.
    const user = await this.access.get(grant.userId);
    if (!user) throw new InvalidToken();
    return { id: grant.userId, admin: user.admin };
  }

  async validate(request: { headers: IncomingHttpHeaders }, claims: Claims): Promise<AuthUser> {
    // Only reached for a token passport-jwt verified, or one it verified before (authenticate above).
    const token = bearerToken(request);
    if (token !== null && !this.verified.has(token)) {
      if (this.verified.size >= VERIFIED_TOKENS_MAX) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, claims);
    }
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
