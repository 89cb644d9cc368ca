// Part of test/modules-lifecycle.e2e-spec.ts: time-based membership events on two replicas.
import { MembershipSweepTimer } from '../../../src/workers/membership-sweep-timer.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { makeModule, makeUser, tokenFor } from '../../support/factories.js';
import { request } from '../../support/http.js';
import { waitFor } from '../../support/wait-for.js';

/**
 * docs/api.md §15, "Time": when a `starts_at` or `ends_at` passes, one `module.members_changed` event with
 * `effective` is written within 60 s, once, however many replicas run. Two replicas of the service share one
 * database here, each sweeping every second.
 */
const INTERVAL_MS = 1000;

export function timeEventsOnTwoReplicas(): void {
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    [first, second] = await Promise.all([
      startTestApp({ membershipSweepIntervalMs: INTERVAL_MS, backgroundWorkers: true }),
      startTestApp({ membershipSweepIntervalMs: INTERVAL_MS, backgroundWorkers: true }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
  });

  const rounds = () => [first, second].map((app) => app.service.app.get(MembershipSweepTimer).rounds);

  /** The `module.members_changed` events with `effective`, oldest first, with the time each was written. */
  const timeEvents = (moduleId: number) =>
    first.dataSource.query<{ data: any; at: Date }[]>(
      `SELECT data, at FROM change_events
       WHERE type = 'module.members_changed' AND data ? 'effective' AND (data->>'module_id')::bigint = $1
       ORDER BY id`,
      [moduleId],
    );

  it('writes one event per module when windows open and close, once, within the interval', async () => {
    await first.reset();
    const admin = await makeUser(first.dataSource, { admin: true });
    const token = tokenFor(admin);
    const module = await makeModule(first.dataSource);
    const other = await makeModule(first.dataSource);
    const leaving = await makeUser(first.dataSource);
    const joining = await makeUser(first.dataSource);
    const elsewhere = await makeUser(first.dataSource);
    const dropped = await makeUser(first.dataSource);
    const members = (moduleId: number) => `/api/modules/${moduleId}/students`;
    // One instant, a few seconds ahead: one membership ends then, one starts, one of another module ends; an
    // inactive membership's end changes nothing and is not reported.
    const instant = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
    const at = instant.toISOString();
    const enrol = async (moduleId: number, body: Record<string, unknown>) =>
      expect((await request(first.url, 'POST', members(moduleId), { token, body })).status).toBe(200);
    await enrol(module.id, { user_ids: [leaving.id], ends_at: at });
    await enrol(module.id, { user_ids: [joining.id], starts_at: at });
    await enrol(module.id, { user_ids: [dropped.id], status: 'inactive', ends_at: at });
    await enrol(other.id, { user_ids: [elsewhere.id], ends_at: at });
    expect(await timeEvents(module.id)).toEqual([]);

    const [event] = await waitFor(
      async () => {
        const events = await timeEvents(module.id);
        return events.length > 0 && events;
      },
      { what: 'the time event of the module', timeoutMs: 60_000, intervalMs: 25 },
    );
    const seenAfter = Date.now() - instant.getTime();
    const writtenAfter = event.at.getTime() - instant.getTime();
    expect(event.data).toEqual({
      module_id: Number(module.id),
      added: [],
      removed: [],
      changed: [],
      effective: [
        { user_id: Number(leaving.id), effective_status: 'completed' },
        { user_id: Number(joining.id), effective_status: 'active' },
      ].sort((a, b) => a.user_id - b.user_id),
    });
    expect(writtenAfter).toBeGreaterThanOrEqual(0);
    expect(seenAfter).toBeLessThan(60_000);
    const [otherEvent] = await waitFor(
      async () => {
        const events = await timeEvents(other.id);
        return events.length > 0 && events;
      },
      { what: 'the time event of the other module', timeoutMs: 60_000 },
    );
    expect(otherEvent.data.effective).toEqual([
      { user_id: Number(elsewhere.id), effective_status: 'completed' },
    ]);

    // Once: both replicas sweep three more rounds each, and no second event appears.
    const after = rounds();
    await waitFor(() => rounds().every((count, i) => count >= after[i] + 3), {
      what: 'three more sweep rounds on each replica',
      timeoutMs: 30_000,
    });
    expect(await timeEvents(module.id)).toHaveLength(1);
    expect(await timeEvents(other.id)).toHaveLength(1);
    // The lists agree with the event.
    const list = await request(first.url, 'GET', `/api/modules/${module.id}/students`, { token });
    const byUser = Object.fromEntries(
      list.body.data.users.map((user: any) => [user.id, user.effective_status]),
    );
    expect(byUser).toEqual({ [leaving.id]: 'completed', [joining.id]: 'active', [dropped.id]: 'inactive' });
    console.log(
      `membership time events on two replicas (sweep every ${INTERVAL_MS} ms): ends_at passed → event written ` +
        `${writtenAfter} ms later (its transaction's time), seen in the outbox ${seenAfter} ms later`,
    );
  });
}
