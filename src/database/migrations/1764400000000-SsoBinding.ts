import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The identity provider's `(iss, sub)` a user is bound to by the first IdP token that reached it (docs/sso.md,
 * "Binding"): later tokens reach the user through `sub`, and a token naming the username with another `sub` is
 * refused. One identity binds at most one user; the service sets and clears both columns together.
 */
export class SsoBinding1764400000000 implements MigrationInterface {
  name = 'SsoBinding1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE users ADD COLUMN sso_issuer text, ADD COLUMN sso_subject text`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX uq_users_sso_identity ON users (sso_issuer, sso_subject) WHERE sso_subject IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX uq_users_sso_identity`);
    await queryRunner.query(`ALTER TABLE users DROP COLUMN sso_subject, DROP COLUMN sso_issuer`);
  }
}
