import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { createRemoteJWKSet, decodeJwt, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig, type OidcSettings } from '../config/app-config.js';
import { InvalidToken } from '../core/errors.js';

/** Asymmetric algorithms only: an HS256 token "signed" with the IdP's public key is refused (docs/sso.md). */
const IDP_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

/** Leeway for `exp`, `nbf` and `iat` against the IdP's clock. */
export const IDP_CLOCK_TOLERANCE_S = 60;

/** Bound on one request to the IdP (discovery or keys). */
const FETCH_TIMEOUT_MS = 5000;

/** What the service uses of the IdP's discovery document. */
interface IdpEndpoints {
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
}

/** https, or http to a loopback host (a test IdP or a local development one), as for OIDC_ISSUER. */
function isAllowedUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
    return url.protocol === 'https:' || (url.protocol === 'http:' && loopback);
  } catch {
    return false;
  }
}

/**
 * The IdP's side of token verification: discovery, its key set (jose's remote JWK set: cached, one refetch for
 * an unknown `kid` per cooldown) and `jwtVerify` with the claims §11 requires. Discovery runs at start without
 * being awaited and again on demand, at most once per cooldown while it fails, so an IdP that is down delays
 * nothing and one that comes back is used without a restart.
 */
@Injectable()
export class IdpTokens implements OnApplicationBootstrap {
  private readonly logger = new Logger(IdpTokens.name);
  private readonly settings: OidcSettings | undefined;
  private endpoints: IdpEndpoints | undefined;
  private keys: JWTVerifyGetKey | undefined;
  private attempt: Promise<void> | undefined;
  private lastAttemptAt = Number.NEGATIVE_INFINITY;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.settings = config.oidc;
  }

  get enabled(): boolean {
    return this.settings !== undefined;
  }

  onApplicationBootstrap(): void {
    if (this.settings) void this.discover();
  }

  /**
   * Whether the token claims to come from the IdP (its unverified `iss` is OIDC_ISSUER), and so gets the IdP's
   * checks instead of the service's own.
   */
  claimsIdpIssuer(token: string): boolean {
    if (!this.settings) return false;
    try {
      return decodeJwt(token).iss === this.settings.issuer;
    } catch {
      return false;
    }
  }

  /** The verified claims of an IdP access token; any failure, an unreachable IdP included, is a 401. */
  async verify(token: string): Promise<JWTPayload & { exp: number }> {
    const settings = this.settings;
    const keys = await this.keySet();
    if (!settings || !keys) throw new InvalidToken();
    try {
      // The key is the one the header names: a token without a `kid` is not matched against the whole set.
      const namedKey: JWTVerifyGetKey = (header, jwt) => {
        if (typeof header.kid !== 'string') throw new Error('no kid in the header');
        return keys(header, jwt);
      };
      const { payload } = await jwtVerify(token, namedKey, {
        issuer: settings.issuer,
        audience: settings.audience,
        algorithms: IDP_ALGORITHMS,
        clockTolerance: IDP_CLOCK_TOLERANCE_S,
        requiredClaims: ['exp'],
      });
      return payload as JWTPayload & { exp: number };
    } catch (error) {
      this.logger.debug(`IdP token refused: ${(error as Error).message}`);
      throw new InvalidToken();
    }
  }

  /** The IdP's endpoints, discovering them first when that has not worked yet (null while it cannot). */
  async idpEndpoints(): Promise<IdpEndpoints | null> {
    if (!this.endpoints) await this.discover();
    return this.endpoints ?? null;
  }

  private async keySet(): Promise<JWTVerifyGetKey | undefined> {
    if (!this.keys) await this.discover();
    return this.keys;
  }

  /** One discovery at a time, and while it fails at most one per cooldown; never throws. */
  private discover(): Promise<void> {
    if (this.keys || !this.settings) return Promise.resolve();
    if (this.attempt) return this.attempt;
    if (Date.now() - this.lastAttemptAt < this.settings.refetchCooldownMs) return Promise.resolve();
    this.lastAttemptAt = Date.now();
    this.attempt = this.fetchDiscovery(this.settings)
      .catch((error: unknown) => {
        this.logger.warn(
          `The identity provider ${this.settings!.issuer} cannot be reached (${(error as Error).message}); ` +
            `its tokens are refused until it can`,
        );
      })
      .finally(() => {
        this.attempt = undefined;
      });
    return this.attempt;
  }

  private async fetchDiscovery(settings: OidcSettings): Promise<void> {
    const url = `${settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const response = await fetch(url, {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    if (response.status !== 200) throw new Error(`discovery answered ${response.status}`);
    const document = (await response.json()) as Record<string, unknown>;
    // OpenID Connect Discovery §4.3: the document's issuer must be the one it was fetched for.
    if (document.issuer !== settings.issuer) throw new Error('discovery names another issuer');
    const { jwks_uri, authorization_endpoint, token_endpoint } = document;
    if (!isAllowedUrl(jwks_uri) || !isAllowedUrl(authorization_endpoint) || !isAllowedUrl(token_endpoint)) {
      throw new Error('discovery lacks jwks_uri, authorization_endpoint or token_endpoint');
    }
    const keys = createRemoteJWKSet(new URL(jwks_uri), {
      cooldownDuration: settings.refetchCooldownMs,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
    // Fetched now, so a key set that cannot be read counts as an IdP that cannot be reached.
    await keys.reload();
    this.endpoints = {
      authorizationEndpoint: authorization_endpoint,
      tokenEndpoint: token_endpoint,
      jwksUri: jwks_uri,
    };
    this.keys = keys;
    this.logger.log(`Accepting access tokens of ${settings.issuer}`);
  }
}
