// The read routes measured side by side with the bare implementation, and their targets.
import {
  DEMO_COMMON_WORD as COMMON_WORD,
  DEMO_RARE_WORD as RARE_WORD,
} from '../../../dist/src/database/demo-data.js';

/**
 * Targets against the lean bare implementation: the cheap reads a web client sends on every page view ≥ 0.8×
 * with p99 ≤ 1.5×; health ≥ 0.5× (no p99 target); the total-bound lists ≥ 5×; the rest ≥ 0.9×, p99 ≤ 1.25×.
 */
const CHEAP = { target: 0.8, p99: 1.5 };

/**
 * `etags`: the current ETag of the two module reads, so that each is measured again as the 304 a client's
 * revalidation gets (docs/api.md §17), on both sides; the 304 row beside the 200 row shows what a revalidation
 * saves.
 */
export function routes(found, tokens, etags) {
  const bearer = (token) => ({ authorization: `Bearer ${token}` });
  const lastPage = Math.max(1, Math.ceil(found.modules / 20));
  return [
    { route: 'GET /api/health', path: '/api/health', target: 0.5, p99: undefined },
    {
      route: 'GET /api/modules (admin, page 1)',
      path: '/api/modules',
      headers: bearer(tokens.admin),
      target: 5,
    },
    {
      route: `GET /api/modules (admin, page ${Math.min(500, lastPage)})`,
      path: `/api/modules?page=${Math.min(500, lastPage)}`,
      headers: bearer(tokens.admin),
    },
    {
      route: `GET /api/modules?query=${RARE_WORD} (admin)`,
      path: `/api/modules?query=${RARE_WORD}`,
      headers: bearer(tokens.admin),
      ...CHEAP,
    },
    {
      route: `GET /api/modules?query=${COMMON_WORD}&sort=-year,code (admin)`,
      path: `/api/modules?query=${COMMON_WORD}&sort=-year,code`,
      headers: bearer(tokens.admin),
      target: 5,
    },
    {
      route: 'GET /api/modules (student, 20 modules)',
      path: '/api/modules',
      headers: bearer(tokens.member),
      ...CHEAP,
    },
    {
      route: 'GET /api/modules/me (student)',
      path: '/api/modules/me',
      headers: bearer(tokens.member),
      ...CHEAP,
    },
    {
      route: `GET /api/modules/{id} (admin, ${found.big.n} people)`,
      path: `/api/modules/${found.big.id}`,
      headers: bearer(tokens.admin),
    },
    {
      route: `GET /api/modules/{id} (member, ${found.small.n} people)`,
      path: `/api/modules/${found.small.id}`,
      headers: bearer(tokens.smallMember),
      ...CHEAP,
    },
    {
      route: `GET /api/modules/{id} (admin, ${found.big.n} people), If-None-Match → 304`,
      path: `/api/modules/${found.big.id}`,
      headers: { ...bearer(tokens.admin), 'if-none-match': etags.big },
      status: 304,
      target: 0.9,
    },
    {
      route: `GET /api/modules/{id} (member, ${found.small.n} people), If-None-Match → 304`,
      path: `/api/modules/${found.small.id}`,
      headers: { ...bearer(tokens.smallMember), 'if-none-match': etags.small },
      status: 304,
      ...CHEAP,
    },
  ];
}
