import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** Integration tokens for SCIM clients and feed readers (docs/api.md §14): only their SHA-256 is stored. */
export class IntegrationTokens1764510000000 implements MigrationInterface {
  name = 'IntegrationTokens1764510000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE integration_tokens (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name varchar(100) NOT NULL,
        scopes varchar(16)[] NOT NULL,
        token_hash bytea NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        expires_at timestamptz(3),
        last_used_at timestamptz(3),
        revoked_at timestamptz(3)
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX uq_integration_tokens_hash ON integration_tokens (token_hash)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE integration_tokens`);
  }
}
