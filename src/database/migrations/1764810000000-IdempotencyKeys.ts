import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** The POSTs' remembered `Idempotency-Key`s (docs/api.md §17), kept 24 hours. */
export class IdempotencyKeys1764810000000 implements MigrationInterface {
  name = 'IdempotencyKeys1764810000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE idempotency_keys (
        caller varchar(40) NOT NULL,
        key varchar(255) NOT NULL,
        fingerprint bytea NOT NULL,
        status smallint,
        body text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (caller, key)
      )`);
    await queryRunner.query(`CREATE INDEX ix_idempotency_keys_created_at ON idempotency_keys (created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE idempotency_keys`);
  }
}
