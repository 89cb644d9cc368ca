import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** Webhooks, their delivery log and the dispatcher's position in the change feed (docs/webhooks.md). */
export class Webhooks1764100000000 implements MigrationInterface {
  name = 'Webhooks1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhooks (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        url varchar(2048) NOT NULL,
        types varchar(64)[] NOT NULL,
        description varchar(500),
        enabled boolean NOT NULL DEFAULT true,
        secret varchar(64) NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        failing_since timestamptz(3)
      )`);
    await queryRunner.query(`
      CREATE TABLE webhook_deliveries (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        webhook_id bigint NOT NULL,
        event_id varchar(128) NOT NULL,
        event_type varchar(64) NOT NULL,
        attempt integer NOT NULL,
        at timestamptz(3) NOT NULL,
        outcome varchar(16) NOT NULL,
        status_code integer,
        error varchar(200),
        duration_ms integer NOT NULL,
        response_excerpt varchar(200),
        next_retry_at timestamptz(3),
        CONSTRAINT webhook_deliveries_webhook_id_fkey FOREIGN KEY (webhook_id)
          REFERENCES webhooks (id) ON DELETE CASCADE
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX uq_webhook_deliveries_attempt ON webhook_deliveries (webhook_id, event_id, attempt)`,
    );
    await queryRunner.query(
      `CREATE INDEX ix_webhook_deliveries_webhook_at ON webhook_deliveries (webhook_id, at, id)`,
    );
    await queryRunner.query(`CREATE INDEX ix_webhook_deliveries_at ON webhook_deliveries (at)`);
    await queryRunner.query(`
      CREATE TABLE webhook_dispatch (
        singleton boolean PRIMARY KEY DEFAULT true,
        last_txid bigint,
        last_event_id bigint,
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT webhook_dispatch_singleton_check CHECK (singleton)
      )`);
    await queryRunner.query(`INSERT INTO webhook_dispatch (singleton) VALUES (true)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE webhook_dispatch`);
    await queryRunner.query(`DROP TABLE webhook_deliveries`);
    await queryRunner.query(`DROP TABLE webhooks`);
  }
}
