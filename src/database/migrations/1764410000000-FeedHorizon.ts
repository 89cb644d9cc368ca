import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The change event feed's horizon counts this database's transactions only (docs/events.md, "What holds the
 * feed back"). `change_event_horizon()` is the smallest of: the statement's snapshot's `xmax` (every id below
 * it had been handed out when the snapshot was taken), the caller's own transaction id, and every transaction
 * id the snapshot sees running that is not shown to belong to another database. A running transaction belongs
 * to another database when a backend of that database reports it as its `backend_xid`
 * (`pg_stat_get_activity`), or when it is a transaction prepared in that database (`pg_prepared_xacts`);
 * one that cannot be placed (it ended since the snapshot, a standby's view of its primary) counts as this
 * database's, so the horizon is never later than it must be. A transaction connected to another database
 * cannot write this database's rows, so no event can ever appear below this horizon: the feed's never-skip
 * rule holds as with the whole server's `xmin`, which any application of the server could hold back.
 *
 * STABLE: it runs on the calling statement's snapshot (the one the feed's read uses), not a snapshot of its own.
 * The backends are listed only when the snapshot sees a transaction running.
 */
export class FeedHorizon1764410000000 implements MigrationInterface {
  name = 'FeedHorizon1764410000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION change_event_horizon() RETURNS bigint LANGUAGE sql STABLE
      AS $$
        SELECT least(
                 pg_snapshot_xmax(s.snap)::text::bigint,
                 pg_current_xact_id_if_assigned()::text::bigint,
                 CASE WHEN pg_snapshot_xmin(s.snap) <> pg_snapshot_xmax(s.snap) THEN (
                   SELECT min(x::text::bigint) FROM pg_snapshot_xip(s.snap) AS x
                   -- xids as 32 bits: the running ones lie within 2^31 of each other, so this is exact.
                   WHERE x::text::bigint % 4294967296 <> ALL (ARRAY(
                     SELECT a.backend_xid::text::bigint FROM pg_stat_get_activity(NULL) a
                     WHERE a.backend_xid IS NOT NULL
                       AND a.datid <> (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                     UNION ALL
                     SELECT p.transaction::text::bigint FROM pg_prepared_xacts p
                     WHERE p.database <> current_database()))
                 ) END)
        FROM (SELECT pg_current_snapshot() AS snap) s
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION change_event_horizon()`);
  }
}
