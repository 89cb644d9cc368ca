import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import type Provider from 'oidc-provider';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

/** The audience the test IdP issues access tokens for (OIDC_AUDIENCE of the services under test). */
export const TEST_AUDIENCE = 'https://modules.example.edu/api';

/** Confidential client whose client_credentials tokens carry whatever claims the test asks for. */
const TOKEN_CLIENT = { id: 'test-token-client', secret: 'test-token-client-secret-0123456789' };

/** Public client of the Swagger UI console (PKCE); any loopback port is accepted (RFC 8252 §7.3). */
export const CONSOLE_CLIENT_ID = 'module-admin-console';

export interface SigningKey {
  kid: string;
  privateJwk: JWK;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** A fresh RS256 signing key. */
export async function makeSigningKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, privateJwk, privateKey, publicJwk };
}

/** A free loopback port (taken and released), for an IdP that is to start later on a known issuer URL. */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** Claims of the person a token speaks for. */
export type PersonClaims = Record<string, unknown>;

/**
 * The IdP's stable subject of a person: from the username claim, lower-cased, unless the claims name a `sub` (an
 * explicit `sub: undefined` leaves it out of a minted token). One person, one `sub`, as at a real IdP.
 */
export function subjectOf(claims: PersonClaims): string | undefined {
  if ('sub' in claims) return claims.sub as string | undefined;
  const name = claims.preferred_username;
  return typeof name === 'string' ? `person-${name.toLowerCase()}` : 'person-without-a-name';
}

/**
 * A real OpenID provider (oidc-provider) on a loopback port: discovery, a key set, client_credentials tokens for
 * tests and the authorization-code login of its own development login form for the browser test. Access tokens
 * are JWTs for {@link TEST_AUDIENCE} (resource indicators; without them oidc-provider issues opaque tokens).
 */
export class TestIdp {
  readonly issuer: string;
  key!: SigningKey;
  /** Requests for the key set, counted to show when the service refetched it. */
  jwksRequests = 0;
  /** How the key set endpoint answers: normally, with a 500, or never (the request is held until stop). */
  jwksFailure: 'none' | 'error' | 'hang' = 'none';
  private server: Server | undefined;
  /** Claims of the next client_credentials token (set by {@link accessToken}). */
  private nextClaims: PersonClaims = {};
  /** Claims of the people who may log in on the login form, by login name. */
  readonly accounts = new Map<string, PersonClaims>();

  constructor(readonly port: number) {
    this.issuer = `http://127.0.0.1:${port}`;
  }

  /** Starts an IdP on a free port (or the port given) with a fresh key. */
  static async start(port?: number): Promise<TestIdp> {
    const idp = new TestIdp(port ?? (await freePort()));
    idp.key = await makeSigningKey('key-1');
    await idp.listen();
    return idp;
  }

  /** Starts (again) on this IdP's port with its current key. */
  async listen(): Promise<void> {
    // Its start-up warnings are about its development defaults (in-memory store, login form): this is a test IdP.
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (!String(args[0]).startsWith('oidc-provider WARNING')) warn(...args);
    };
    let provider: Provider;
    try {
      // Imported here, under the filter: on Node 20 it also warns on import (it supports 22+; it works on 20).
      const { default: OidcProvider } = await import('oidc-provider');
      provider = new OidcProvider(this.issuer, this.configuration());
    } finally {
      console.warn = warn;
    }
    const handle = provider.callback();
    this.server = createServer((request, response) => {
      if (request.url?.startsWith('/jwks')) {
        this.jwksRequests++;
        if (this.jwksFailure === 'hang') return;
        if (this.jwksFailure === 'error') {
          response.writeHead(500).end();
          return;
        }
      }
      handle(request, response);
    });
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    const server = this.server;
    this.server = undefined;
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  }

  /** A key rotation: the IdP now signs with a new key and publishes only that one. */
  async rotateKey(kid: string): Promise<void> {
    await this.stop();
    this.key = await makeSigningKey(kid);
    await this.listen();
  }

  /** An access token issued by the provider itself (client_credentials) carrying these person claims. */
  async accessToken(claims: PersonClaims): Promise<string> {
    this.nextClaims = claims;
    const response = await fetch(`${this.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${TOKEN_CLIENT.id}:${TOKEN_CLIENT.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'api' }).toString(),
    });
    const body = (await response.json()) as { access_token?: string };
    if (response.status !== 200 || !body.access_token) {
      throw new Error(`the test IdP issued no token: ${response.status} ${JSON.stringify(body)}`);
    }
    return body.access_token;
  }

  /**
   * A token signed with this IdP's current key (or another), with the claims given and defaults for the rest:
   * for the cases the provider would never issue (expired, wrong audience, tampered…).
   */
  async mint(claims: PersonClaims, options: { key?: SigningKey; header?: Record<string, unknown> } = {}) {
    const key = options.key ?? this.key;
    const now = Math.floor(Date.now() / 1000);
    const sub = subjectOf(claims);
    return new SignJWT({
      iss: this.issuer,
      aud: TEST_AUDIENCE,
      iat: now,
      exp: now + 600,
      ...(sub === undefined ? {} : { sub }),
      ...claims,
    })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'at+jwt', ...options.header })
      .sign(key.privateKey);
  }

  private configuration(): Record<string, unknown> {
    const resourceServer = {
      scope: 'api',
      audience: TEST_AUDIENCE,
      accessTokenFormat: 'jwt',
      accessTokenTTL: 600,
      jwt: { sign: { alg: 'RS256' } },
    };
    return {
      jwks: { keys: [this.key.privateJwk] },
      clients: [
        {
          client_id: TOKEN_CLIENT.id,
          client_secret: TOKEN_CLIENT.secret,
          grant_types: ['client_credentials'],
          response_types: [],
          redirect_uris: [],
        },
        {
          client_id: CONSOLE_CLIENT_ID,
          application_type: 'native',
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code'],
          response_types: ['code'],
          redirect_uris: ['http://127.0.0.1/api/docs/oauth2-redirect.html'],
        },
      ],
      findAccount: (_context: unknown, id: string) => ({
        accountId: id,
        claims: () => ({ sub: id, ...this.accounts.get(id) }),
      }),
      claims: { openid: ['sub'], profile: ['preferred_username', 'name'], email: ['email'] },
      scopes: ['openid', 'profile', 'email', 'api'],
      features: {
        clientCredentials: { enabled: true },
        devInteractions: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => TEST_AUDIENCE,
          useGrantedResource: () => true,
          getResourceServerInfo: () => resourceServer,
        },
      },
      // The person's claims go into the access token: from the login for a signed-in person, else as set.
      extraTokenClaims: (_context: unknown, token: { accountId?: string }) =>
        token.accountId !== undefined
          ? { preferred_username: token.accountId, ...this.accounts.get(token.accountId) }
          : this.nextClaims,
      formats: {
        customizers: {
          // A client_credentials token's `sub` is the client's id; the test person's own stands in for it.
          jwt: (
            _context: unknown,
            token: { accountId?: string },
            jwt: { payload: Record<string, unknown> },
          ) => {
            if (token.accountId !== undefined) return;
            const sub = subjectOf(this.nextClaims);
            if (sub === undefined) delete jwt.payload.sub;
            else jwt.payload.sub = sub;
          },
        },
      },
      // The console's origin is any loopback port, so every loopback origin may call the token endpoint.
      clientBasedCORS: (_context: unknown, origin: string) => /^http:\/\/127\.0\.0\.1:\d+$/.test(origin),
      pkce: { required: () => true },
      cookies: { keys: ['test-idp-cookie-key-0123456789'] },
      ttl: {
        AccessToken: 600,
        ClientCredentials: 600,
        AuthorizationCode: 60,
        Grant: 600,
        Interaction: 600,
        Session: 600,
        IdToken: 600,
      },
    };
  }
}
