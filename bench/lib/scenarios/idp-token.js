// Single sign-on: the identity provider's access token against the service's own.
import { call, load, mean, settle } from '../measure.js';
import { log } from '../options.js';

/**
 * Single sign-on: the same request on the service with the identity provider's access token (RS256, verified
 * with the IdP's keys, its user found by username) and with the service's own token (HS256), in alternating
 * rounds. Both are remembered after their first use, so they must cost the same (docs/sso.md).
 */
export async function idpTokenTiming(
  serviceUrl,
  tokens,
  { rounds, seconds, warmup, connections },
  databaseUrl,
) {
  const route = (token) => ({ path: '/api/modules/me', headers: { authorization: `Bearer ${token}` } });
  const [local, idp] = await Promise.all([
    call(serviceUrl, route(tokens.local)),
    call(serviceUrl, route(tokens.idp)),
  ]);
  if (local.status !== 200 || idp.status !== 200 || local.body !== idp.body) {
    throw new Error(`IdP token: answers differ (${local.status} / ${idp.status})`);
  }
  const runs = { local: [], idp: [] };
  for (const side of ['local', 'idp']) {
    await load(serviceUrl, route(tokens[side]), warmup, connections);
    await settle(databaseUrl);
  }
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? ['local', 'idp'] : ['idp', 'local']) {
      runs[side].push(await load(serviceUrl, route(tokens[side]), seconds, connections));
      await settle(databaseUrl);
    }
  }
  const summary = (side) => ({
    rps:
      runs[side].reduce((sum, r) => sum + r.requests, 0) / runs[side].reduce((sum, r) => sum + r.seconds, 0),
    p50: mean(runs[side].map((r) => r.p50)),
    p99: mean(runs[side].map((r) => r.p99)),
  });
  const result = { route: 'GET /api/modules/me (student)', local: summary('local'), idp: summary('idp') };
  result.ratio = result.idp.rps / result.local.rps;
  result.p99Ratio = result.idp.p99 / result.local.p99;
  log(
    `IdP token: ${result.idp.rps.toFixed(0)} req/s, local token ${result.local.rps.toFixed(0)} req/s, ` +
      `ratio ${result.ratio.toFixed(2)}, p99 ratio ${result.p99Ratio.toFixed(2)}`,
  );
  return result;
}
