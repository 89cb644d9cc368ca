// A minimal OpenID provider for the benchmark's single-sign-on scenario: discovery and a key set on a loopback
// port, and RS256 access tokens signed here (the service fetches the keys once; nothing else is asked of it).
// The e2e tests use a real provider (oidc-provider); for timing the service only the token's shape matters.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

export const BENCH_AUDIENCE = 'https://modules.example.edu/bench-api';

export async function startBenchIdp() {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench-1', alg: 'RS256', use: 'sig' };
  let issuer = '';
  const server = createServer((request, response) => {
    const body =
      request.url === '/.well-known/openid-configuration'
        ? {
            issuer,
            jwks_uri: `${issuer}/jwks`,
            authorization_endpoint: `${issuer}/auth`,
            token_endpoint: `${issuer}/token`,
          }
        : request.url === '/jwks'
          ? { keys: [jwk] }
          : null;
    response.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body ?? {}));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  issuer = `http://127.0.0.1:${server.address().port}`;
  return {
    issuer,
    audience: BENCH_AUDIENCE,
    /** An access token for the local user `username`, valid for an hour. */
    token(username) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ preferred_username: username, scope: 'openid profile' })
        .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'at+jwt' })
        .setIssuer(issuer)
        .setAudience(BENCH_AUDIENCE)
        .setSubject(`idp-${username}`)
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .sign(privateKey);
    },
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}
