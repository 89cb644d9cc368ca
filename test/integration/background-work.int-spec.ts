// The background work's passes called directly on a testing module: the retention prunes and the membership
// sweep. In the service the WorkersModule (src/workers/) runs them on timers; here it is not imported, and a test
// calls one pass and reads the rows it left.
import { AuditRepository } from '../../src/audit/audit.repository.js';
import { AuditService } from '../../src/audit/audit.service.js';
import { MembershipSweep } from '../../src/course-modules/membership/membership-sweep.js';
import { ModuleRolesRepository } from '../../src/course-modules/membership/module-roles.repository.js';
import { UserModuleRole } from '../../src/course-modules/membership/user-module-role.entity.js';
import { ModuleRole } from '../../src/course-modules/modules/module-role.js';
import { ChangeEventsService } from '../../src/events/change-events.service.js';
import { IdempotencyPrune } from '../../src/idempotency/idempotency.module.js';
import { IdempotencyRepository } from '../../src/idempotency/idempotency.repository.js';
import { makeModule, makeUser } from '../support/factories.js';
import { CHANGE_EVENTS_PROVIDERS, useIntegrationModule } from '../support/nest-testing.js';
import { waitFor } from '../support/wait-for.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

describe('background work, one pass at a time', () => {
  const nest = useIntegrationModule({
    providers: [
      AuditRepository,
      AuditService,
      IdempotencyRepository,
      IdempotencyPrune,
      ...CHANGE_EVENTS_PROVIDERS,
      ModuleRolesRepository,
      MembershipSweep,
    ],
    entities: [UserModuleRole],
    config: { auditRetentionDays: 30, eventRetentionDays: 7 },
  });
  beforeEach(() => nest.reset());

  /** One moment for a whole test: rows are written relative to it and the prune is told it is `now`. */
  const now = () => new Date();
  const ago = (from: Date, ms: number) => new Date(from.getTime() - ms);

  describe('the audit retention prune (AuditService.prune)', () => {
    it('deletes the events older than AUDIT_RETENTION_DAYS and keeps the newer ones', async () => {
      const at = now();
      for (const [action, when] of [
        ['old.one', ago(at, 400 * DAY_MS)],
        ['old.two', ago(at, 30 * DAY_MS + MINUTE_MS)],
        ['kept.edge', ago(at, 30 * DAY_MS - MINUTE_MS)],
        ['kept.new', at],
      ] as const) {
        await nest.dataSource.query(`INSERT INTO audit_events (at, action) VALUES ($1, $2)`, [when, action]);
      }
      expect(await nest.get(AuditService).prune(at)).toBe(2);
      const left = await nest.dataSource.query<{ action: string }[]>(
        `SELECT action FROM audit_events ORDER BY at`,
      );
      expect(left.map((row) => row.action)).toEqual(['kept.edge', 'kept.new']);
      // A second pass finds nothing more.
      expect(await nest.get(AuditService).prune(at)).toBe(0);
    });
  });

  describe('the change event retention prune (ChangeEventsService.prune)', () => {
    const events = () =>
      nest.dataSource.query<{ type: string }[]>(`SELECT type FROM change_events ORDER BY txid, id`);
    const watermark = async () =>
      (
        await nest.dataSource.query<{ txid: string; id: string }[]>(
          `SELECT txid::text, id::text FROM change_events_pruned`,
        )
      )[0];
    /** One event per transaction, in this order: the feed orders them by their transactions' ids. */
    const write = async (type: string, at: Date) =>
      (
        await nest.dataSource.query<{ txid: string; id: string }[]>(
          `INSERT INTO change_events (type, at, data) VALUES ($1, $2, '{}') RETURNING txid::text, id::text`,
          [type, at],
        )
      )[0];

    /**
     * Waits until no transaction of the server older than `position` still runs (the server's oldest running
     * transaction id has passed it). A transaction of another database that ends while the prune reads the
     * backends cannot be placed and holds the prune's horizon back (docs/events.md, "What holds the feed back");
     * the other Jest workers' databases are on this server. Past this point no such transaction is older than
     * the events, so the prune's answer is the retention rule's alone.
     */
    const settled = (position: { txid: string }) =>
      waitFor(
        async () =>
          (
            await nest.dataSource.query<{ passed: boolean }[]>(
              `SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint > $1::bigint AS passed`,
              [position.txid],
            )
          )[0].passed,
        { what: "the server's older transactions to end", timeoutMs: 45_000 },
      );

    it('deletes the prefix of the feed older than EVENT_RETENTION_DAYS, keeps the rest, and marks where it stopped', async () => {
      const at = now();
      await write('user.created', ago(at, 40 * DAY_MS));
      const lastOld = await write('user.updated', ago(at, 7 * DAY_MS + MINUTE_MS));
      await write('module.created', ago(at, 7 * DAY_MS - MINUTE_MS));
      await settled(await write('module.updated', at));
      expect(await watermark()).toBeUndefined();

      expect(await nest.get(ChangeEventsService).prune(at)).toBe(2);
      expect((await events()).map((row) => row.type)).toEqual(['module.created', 'module.updated']);
      // The watermark is the last event deleted: a cursor before it has missed events (410).
      expect(await watermark()).toEqual(lastOld);
      expect(await nest.get(ChangeEventsService).prune(at)).toBe(0);
      expect(await watermark()).toEqual(lastOld);
    });

    it('stops at the first event inside the window: an old event written after it is kept', async () => {
      const at = now();
      await write('user.created', ago(at, 40 * DAY_MS));
      await write('module.created', at);
      // Old by its time, but after a kept event in the feed's order: deleting it would leave a hole.
      await settled(await write('user.deleted', ago(at, 40 * DAY_MS)));
      expect(await nest.get(ChangeEventsService).prune(at)).toBe(1);
      expect((await events()).map((row) => row.type)).toEqual(['module.created', 'user.deleted']);
    });
  });

  describe('the idempotency keys prune (IdempotencyPrune.prune)', () => {
    it('deletes the keys created more than 24 hours ago and keeps the younger ones', async () => {
      const at = now();
      for (const [key, created] of [
        ['two-days', ago(at, 48 * HOUR_MS)],
        ['past-24h', ago(at, 24 * HOUR_MS + MINUTE_MS)],
        ['within-24h', ago(at, 24 * HOUR_MS - MINUTE_MS)],
        ['new', at],
      ] as const) {
        await nest.dataSource.query(
          `INSERT INTO idempotency_keys (caller, key, fingerprint, created_at) VALUES ('user:1', $1, '\\x00', $2)`,
          [key, created],
        );
      }
      expect(await nest.get(IdempotencyPrune).prune(at)).toBe(2);
      const left = await nest.dataSource.query<{ key: string }[]>(
        `SELECT key FROM idempotency_keys ORDER BY created_at`,
      );
      expect(left.map((row) => row.key)).toEqual(['within-24h', 'new']);
      expect(await nest.get(IdempotencyPrune).prune(at)).toBe(0);
    });
  });

  describe('the membership sweep (MembershipSweep.sweep)', () => {
    /** A role row written straight into the database with its window (the insert trigger sets `reported_status`). */
    const member = (
      userId: number,
      moduleId: number,
      window: { status?: string; starts_at?: Date; ends_at?: Date },
    ) =>
      nest.dataSource.query(
        `INSERT INTO user_module_roles (user_id, module_id, role, status, starts_at, ends_at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [
          userId,
          moduleId,
          ModuleRole.Student,
          window.status ?? 'active',
          window.starts_at ?? null,
          window.ends_at ?? null,
        ],
      );
    const reported = async (moduleId: number) =>
      (
        await nest.dataSource.query<{ user_id: number; reported_status: string }[]>(
          `SELECT user_id, reported_status::text FROM user_module_roles WHERE module_id = $1 ORDER BY user_id`,
          [moduleId],
        )
      ).map((row) => [row.user_id, row.reported_status]);
    const timeEvents = () =>
      nest.dataSource.query<{ data: { module_id: number; effective: unknown[] } }[]>(
        `SELECT data FROM change_events WHERE type = 'module.members_changed' ORDER BY txid, id`,
      );
    /**
     * Time passes for `userId`'s window: its dates move into the past with the triggers off, as if the clock had
     * moved on, so `reported_status` keeps what the last write reported.
     */
    const passes = (userId: number, moduleId: number, column: 'starts_at' | 'ends_at') =>
      nest.dataSource.transaction(async (manager) => {
        await manager.query(`SET LOCAL session_replication_role = replica`);
        await manager.query(
          `UPDATE user_module_roles SET ${column} = now() - interval '1 minute' WHERE user_id = $1 AND module_id = $2`,
          [userId, moduleId],
        );
      });

    it('writes one event per module for the windows that opened or closed, marks them reported, and only once', async () => {
      const sweep = nest.get(MembershipSweep);
      const module = await makeModule(nest.dataSource);
      const other = await makeModule(nest.dataSource);
      const joining = await makeUser(nest.dataSource);
      const leaving = await makeUser(nest.dataSource);
      const staying = await makeUser(nest.dataSource);
      const dropped = await makeUser(nest.dataSource);
      const elsewhere = await makeUser(nest.dataSource);
      const later = new Date(Date.now() + DAY_MS);
      await member(joining.id, module.id, { starts_at: later });
      await member(leaving.id, module.id, { ends_at: later });
      await member(staying.id, module.id, { starts_at: ago(new Date(), DAY_MS), ends_at: later });
      await member(dropped.id, module.id, { status: 'inactive', ends_at: later });
      await member(elsewhere.id, other.id, { ends_at: later });

      // Nothing has passed yet.
      expect(await sweep.sweep()).toBe(0);
      expect(await timeEvents()).toEqual([]);

      await passes(joining.id, module.id, 'starts_at');
      await passes(leaving.id, module.id, 'ends_at');
      await passes(dropped.id, module.id, 'ends_at');
      await passes(elsewhere.id, other.id, 'ends_at');
      expect(await sweep.sweep()).toBe(3);

      const byUser = (a: { user_id: number }, b: { user_id: number }) => a.user_id - b.user_id;
      expect((await timeEvents()).map((row) => row.data)).toEqual([
        {
          module_id: Number(module.id),
          added: [],
          removed: [],
          changed: [],
          effective: [
            { user_id: Number(joining.id), effective_status: 'active' },
            { user_id: Number(leaving.id), effective_status: 'completed' },
          ].sort(byUser),
        },
        {
          module_id: Number(other.id),
          added: [],
          removed: [],
          changed: [],
          effective: [{ user_id: Number(elsewhere.id), effective_status: 'completed' }],
        },
      ]);
      // An inactive membership's end changes nothing: it stays reported as inactive and is not in the event.
      expect(await reported(module.id)).toEqual(
        [
          [joining.id, 'active'],
          [leaving.id, 'completed'],
          [staying.id, 'active'],
          [dropped.id, 'inactive'],
        ].sort((a, b) => Number(a[0]) - Number(b[0])),
      );

      // Reported once: the next sweep finds nothing and writes nothing.
      expect(await sweep.sweep()).toBe(0);
      expect(await timeEvents()).toHaveLength(2);
    });

    it('writes nothing while another sweep holds the lock, and the rows wait for the next sweep', async () => {
      const sweep = nest.get(MembershipSweep);
      const module = await makeModule(nest.dataSource);
      const leaving = await makeUser(nest.dataSource);
      await member(leaving.id, module.id, { ends_at: new Date(Date.now() + DAY_MS) });
      await passes(leaving.id, module.id, 'ends_at');
      const holder = nest.dataSource.createQueryRunner();
      await holder.startTransaction();
      try {
        // Another replica's sweep, in its transaction (the same advisory lock).
        expect(await nest.get(ModuleRolesRepository).tryLockSweep(holder.manager)).toBe(true);
        expect(await sweep.sweep()).toBe(0);
        expect(await timeEvents()).toEqual([]);
      } finally {
        await holder.rollbackTransaction();
        await holder.release();
      }
      expect(await sweep.sweep()).toBe(1);
      expect((await timeEvents()).map((row) => row.data.effective)).toEqual([
        [{ user_id: Number(leaving.id), effective_status: 'completed' }],
      ]);
    });
  });
});
