// The HTTP layer: its conventions (docs/api.md §1), mass assignment and bounds, answers given before the body is read, request timeouts, proxies and the connection pool.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/http/, one file a part; the raw clients they use are test/support/raw-http.ts and
// test/support/remote-fetch.ts.
import { connectionPoolTests } from './e2e/http/connection-pool.js';
import { useEarlyAnswerCallers } from './e2e/http/context.js';
import { conventionTests } from './e2e/http/conventions.js';
import { massAssignmentTests } from './e2e/http/mass-assignment.js';
import { nodeFetchTests } from './e2e/http/node-fetch.js';
import { rawSocketTests } from './e2e/http/raw-socket.js';
import { requestTimeoutTests, TIMEOUT_MS } from './e2e/http/request-timeouts.js';
import { reusedConnectionTests } from './e2e/http/reused-connection.js';
import { trustProxyAddress, trustProxyHops, trustProxyUnset } from './e2e/http/trust-proxy.js';
import { useTestApp } from './support/app.js';

/**
 * An answer given before the request body is read (unknown user, no token, not an admin, a body too large or of
 * the wrong type) must reach a client that is still sending that body: intact status, headers and envelope, no
 * connection reset. Real clients only: Node's fetch (undici) and a raw socket that keeps writing.
 */
describe('Answers given before the request body is read reach the client', () => {
  const ctx = useEarlyAnswerCallers(useTestApp());
  nodeFetchTests(ctx);
  rawSocketTests(ctx);
  reusedConnectionTests(ctx);
});

describe('conventions (docs/api.md §1)', () => conventionTests(useTestApp()));

describe('mass assignment and bounds', () => massAssignmentTests(useTestApp()));

describe('A request must arrive within REQUEST_TIMEOUT_MS', () =>
  requestTimeoutTests(useTestApp({ requestTimeoutMs: TIMEOUT_MS })));

describe('TRUST_PROXY unset: the address is the socket peer, X-Forwarded-For is ignored', () =>
  trustProxyUnset(useTestApp()));

describe('TRUST_PROXY=127.0.0.1: behind a proxy the client address comes from X-Forwarded-For', () =>
  trustProxyAddress(useTestApp({ trustProxy: ['127.0.0.1'] })));

describe('TRUST_PROXY=1 (one hop)', () => trustProxyHops(useTestApp({ trustProxy: 1 })));

describe('the connection pool', () => connectionPoolTests(useTestApp({ dbStatementTimeoutMs: 1234 })));
