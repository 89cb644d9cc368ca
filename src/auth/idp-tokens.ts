import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import {
  createRemoteJWKSet,
  decodeJwt,
  errors,
  type JWTHeaderParameters,
  type JWTPayload,
  jwtVerify,
  type JWTVerifyGetKey,
} from 'jose';
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

/** How long the IdP's keys are used before a refresh in the background (jose's default cache age). */
const KEYS_MAX_AGE_MS = 600_000;

/** Claims only an ID token carries (OpenID Connect Core §2, §3.1.3.6, §3.3.2.11). */
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'c_hash', 's_hash'];

/**
 * Whether the token is an access token, as far as the IdP marks it (docs/security.md, "IdP tokens"): `typ`
 * `at+jwt` (RFC 9068) is one; another explicit type (an ID token's `id_token+jwt`, a logout token…) is not; an
 * unmarked token (`typ` `JWT` or none: Entra ID, Okta, Keycloak's header) is refused when its claims say it is
 * something else: Keycloak's `typ` claim other than `Bearer`, Cognito's `token_use` other than `access`, or a claim
 * only ID tokens carry. An unmarked ID token without those, for this API's audience, cannot be told apart: the
 * audience must be the API's own (docs/sso.md, "The audience trap").
 */
export function isAccessToken(header: JWTHeaderParameters, claims: JWTPayload): boolean {
  const typ =
    typeof header.typ === 'string' ? header.typ.toLowerCase().replace(/^application\//, '') : undefined;
  if (typ === 'at+jwt') return true;
  if (typ !== undefined && typ !== 'jwt') return false;
  if (claims.typ !== undefined && claims.typ !== 'Bearer') return false;
  if (claims.token_use !== undefined && claims.token_use !== 'access') return false;
  return !ID_TOKEN_CLAIMS.some((claim) => claim in claims);
}

/** jose's remote key set. */
type RemoteKeys = ReturnType<typeof createRemoteJWKSet>;

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
  private keys: RemoteKeys | undefined;
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
    this.refreshIfStale(settings, keys);
    try {
      // The key is the one the header names: a token without a `kid` is not matched against the whole set.
      const namedKey: JWTVerifyGetKey = async (header, jwt) => {
        if (typeof header.kid !== 'string') throw new Error('no kid in the header');
        try {
          return await keys(header, jwt);
        } catch (error) {
          // A kid the keys lack: one refetch per cooldown (a key rotation), whether the last one worked or not.
          if (!(error instanceof errors.JWKSNoMatchingKey) || !this.mayFetchKeys(settings)) throw error;
          await this.fetchKeys(keys);
          return keys(header, jwt);
        }
      };
      const { payload, protectedHeader } = await jwtVerify(token, namedKey, {
        issuer: settings.issuer,
        audience: settings.audience,
        algorithms: IDP_ALGORITHMS,
        clockTolerance: IDP_CLOCK_TOLERANCE_S,
        // Without `iat` a token's lifetime is unknown, so OIDC_MAX_TOKEN_AGE could not bound it (RFC 9068 §2.2
        // requires it of access tokens anyway).
        requiredClaims: ['exp', 'iat'],
      });
      if (!isAccessToken(protectedHeader, payload)) throw new Error('not an access token');
      const { exp, iat } = payload as JWTPayload & { exp: number; iat: number };
      // jose checks `iat` only against a maximum age; one in the future is refused here.
      if (iat > Date.now() / 1000 + IDP_CLOCK_TOLERANCE_S) throw new Error('iat in the future');
      // A stolen token is usable until it expires: the IdP may not hand out one that lives longer than allowed.
      if (exp - iat > settings.maxTokenAgeS) throw new Error('lives longer than OIDC_MAX_TOKEN_AGE');
      return payload as JWTPayload & { exp: number };
    } catch (error) {
      this.logger.debug(`IdP token refused: ${(error as Error).message}`);
      throw new InvalidToken();
    }
  }

  /**
   * The keys in use: fetched at `keysFetchedAt`; jose's remote set is told never to refetch by itself (it would
   * make requests wait on the key endpoint, and while the endpoint fails it would try again on every request
   * after the cooldown), so every fetch goes through here.
   */
  private keysFetchedAt = 0;
  private lastKeysAttemptAt = Number.NEGATIVE_INFINITY;
  private keysFetch: Promise<void> | undefined;

  private mayFetchKeys(settings: OidcSettings): boolean {
    return Date.now() - this.lastKeysAttemptAt >= settings.refetchCooldownMs;
  }

  /** One fetch of the key set at a time; a failed one keeps the last good keys. Never throws. */
  private fetchKeys(keys: RemoteKeys): Promise<void> {
    if (this.keysFetch) return this.keysFetch;
    this.lastKeysAttemptAt = Date.now();
    this.keysFetch = keys
      .reload()
      .then(() => {
        this.keysFetchedAt = Date.now();
      })
      .catch((error: unknown) => {
        this.logger.warn(
          `The identity provider's keys cannot be fetched (${(error as Error).message}); the last ones fetched stay in use`,
        );
      })
      .finally(() => {
        this.keysFetch = undefined;
      });
    return this.keysFetch;
  }

  /** Keys older than their maximum age are refreshed in the background: no request waits for the IdP. */
  private refreshIfStale(settings: OidcSettings, keys: RemoteKeys): void {
    const maxAge = settings.keysMaxAgeMs ?? KEYS_MAX_AGE_MS;
    if (Date.now() - this.keysFetchedAt < maxAge || !this.mayFetchKeys(settings)) return;
    void this.fetchKeys(keys);
  }

  /** The IdP's endpoints, discovering them first when that has not worked yet (null while it cannot). */
  async idpEndpoints(): Promise<IdpEndpoints | null> {
    if (!this.endpoints) await this.discover();
    return this.endpoints ?? null;
  }

  private async keySet(): Promise<RemoteKeys | undefined> {
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
    // jose fetches, parses and selects keys; when to fetch is decided by this class (fetchKeys).
    const keys = createRemoteJWKSet(new URL(jwks_uri), {
      cooldownDuration: Number.POSITIVE_INFINITY,
      cacheMaxAge: Number.POSITIVE_INFINITY,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
    // Fetched now, so a key set that cannot be read counts as an IdP that cannot be reached.
    await keys.reload();
    this.keysFetchedAt = Date.now();
    this.lastKeysAttemptAt = this.keysFetchedAt;
    this.endpoints = {
      authorizationEndpoint: authorization_endpoint,
      tokenEndpoint: token_endpoint,
      jwksUri: jwks_uri,
    };
    this.keys = keys;
    this.logger.log(`Accepting access tokens of ${settings.issuer}`);
  }
}
