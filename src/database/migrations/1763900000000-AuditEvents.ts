import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** The audit trail (docs/api.md §10): append-only events, with indexes for the `GET /api/audit` filters. */
export class AuditEvents1763900000000 implements MigrationInterface {
  name = 'AuditEvents1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE audit_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz(3) NOT NULL DEFAULT now(),
        actor_id bigint,
        action varchar(64) NOT NULL,
        target_type varchar(32),
        target_ids bigint[] NOT NULL DEFAULT '{}',
        summary jsonb NOT NULL DEFAULT '{}',
        request_id varchar(128),
        client_ip varchar(64)
      )`);
    await queryRunner.query(`CREATE INDEX ix_audit_events_at ON audit_events (at, id)`);
    await queryRunner.query(`CREATE INDEX ix_audit_events_actor ON audit_events (actor_id, at)`);
    await queryRunner.query(`CREATE INDEX ix_audit_events_action ON audit_events (action, at)`);
    await queryRunner.query(`CREATE INDEX ix_audit_events_target_ids ON audit_events USING gin (target_ids)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE audit_events`);
  }
}
