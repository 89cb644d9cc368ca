import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The LMS roster exports (docs/api.md §16).
 *
 * - `user_module_roles.status_set_at`: when the row's stored `status` was last set (a trigger keeps it), the end
 *   date an export gives a `completed` membership without an `ends_at`. Rows stored before this migration get
 *   their `created_at` when they are not `active` (the best guess there is), the migration's time otherwise
 *   (a constant default: no table rewrite).
 * - `lms_exports`: one row per export that was not a preview, so that `max_drop` can compare an export with the
 *   last one of its profile and year. Insert-only: two exports at once never wait for each other.
 */
export class LmsExports1764820000000 implements MigrationInterface {
  name = 'LmsExports1764820000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE user_module_roles ADD COLUMN status_set_at timestamptz(3) NOT NULL DEFAULT now()`,
    );
    await queryRunner.query(
      `UPDATE user_module_roles SET status_set_at = created_at WHERE status <> 'active'`,
    );
    await queryRunner.query(`
      CREATE FUNCTION user_module_roles_status_set() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.status_set_at := now();
        RETURN NEW;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER tr_user_module_roles_status_set BEFORE UPDATE ON user_module_roles FOR EACH ROW
      WHEN (OLD.status IS DISTINCT FROM NEW.status)
      EXECUTE FUNCTION user_module_roles_status_set()`);
    await queryRunner.query(`
      CREATE TABLE lms_exports (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        profile varchar(16) NOT NULL,
        year integer NOT NULL,
        enrollments integer NOT NULL,
        exported_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX ix_lms_exports_profile_year ON lms_exports (profile, year, id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE lms_exports`);
    await queryRunner.query(`DROP TRIGGER tr_user_module_roles_status_set ON user_module_roles`);
    await queryRunner.query(`DROP FUNCTION user_module_roles_status_set()`);
    await queryRunner.query(`ALTER TABLE user_module_roles DROP COLUMN status_set_at`);
  }
}
