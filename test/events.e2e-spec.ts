// The change feed (GET /api/events): reads, long-poll fan-out, the horizon, retention on a large backlog.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/events/, one file a part.
import { useChangeFeed } from './e2e/events/context.js';
import { longPollFanOut } from './e2e/events/fan-out.js';
import { feedTests } from './e2e/events/feed.js';
import { changeEventHorizon } from './e2e/events/horizon.js';
import { longPollTests } from './e2e/events/long-poll.js';
import { retentionOnLargeBacklog } from './e2e/events/retention.js';
import { volumeAndShutdownTests } from './e2e/events/volume-and-shutdown.js';
import { writeRouteTests } from './e2e/events/write-routes.js';
import { useTestApp } from './support/app.js';
import { LOOPBACK_WEBHOOKS } from './support/webhook-receiver.js';

/** docs/events.md: change events written by every write route, and the feed that serves them. */
describe('Change events (GET /api/events)', () => {
  const ctx = useChangeFeed(useTestApp());
  feedTests(ctx);
  longPollTests(ctx);
  writeRouteTests(ctx);
  // Last: its shutdown test starts a second service, after which this one can no longer authenticate requests.
  volumeAndShutdownTests(ctx);
});

describe('Long-poll fan-out (GET /api/events?wait=)', () =>
  longPollFanOut(useTestApp({ eventFeedMaxWaiting: 100 })));

describe('the change event horizon', () => changeEventHorizon(useTestApp(LOOPBACK_WEBHOOKS)));

describe('Change event retention on a large backlog', () =>
  retentionOnLargeBacklog(useTestApp({ dbStatementTimeoutMs: 150, eventRetentionDays: 30 })));
