import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Change events (docs/events.md): the transactional outbox the feed and the webhooks read. `txid` is the writing
 * transaction's 64-bit id (`pg_current_xact_id()`, an xid8 stored as bigint): the feed is ordered by
 * `(txid, id)` and serves only rows whose transaction is older than every one still running. One row holds
 * the feed position up to which retention has pruned, so an older cursor is answered 410.
 */
export class ChangeEvents1764000000000 implements MigrationInterface {
  name = 'ChangeEvents1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION change_event_txid() RETURNS bigint LANGUAGE sql VOLATILE
      AS $$ SELECT pg_current_xact_id()::text::bigint $$`);
    await queryRunner.query(`
      CREATE TABLE change_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        txid bigint NOT NULL DEFAULT change_event_txid(),
        type text NOT NULL,
        at timestamptz(3) NOT NULL DEFAULT now(),
        data jsonb NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX ix_change_events_position ON change_events (txid, id)`);
    await queryRunner.query(`CREATE INDEX ix_change_events_type_position ON change_events (type, txid, id)`);
    await queryRunner.query(`
      CREATE TABLE change_events_pruned (
        singleton boolean PRIMARY KEY DEFAULT true,
        txid bigint NOT NULL,
        id bigint NOT NULL,
        CONSTRAINT change_events_pruned_singleton_check CHECK (singleton)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE change_events_pruned`);
    await queryRunner.query(`DROP TABLE change_events`);
    await queryRunner.query(`DROP FUNCTION change_event_txid()`);
  }
}
