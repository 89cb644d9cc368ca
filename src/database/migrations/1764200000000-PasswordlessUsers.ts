import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** Users created by single sign-on have no password (docs/sso.md): password login is impossible for them. */
export class PasswordlessUsers1764200000000 implements MigrationInterface {
  name = 'PasswordlessUsers1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE users ALTER COLUMN password_hash DROP NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // A password-less user cannot be kept under NOT NULL; an empty hash matches no password.
    await queryRunner.query(`UPDATE users SET password_hash = '' WHERE password_hash IS NULL`);
    await queryRunner.query(`ALTER TABLE users ALTER COLUMN password_hash SET NOT NULL`);
  }
}
