import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The module list's totals without counting on every request (docs/performance.md):
 *
 * - `module_stats`, one row kept by statement-level triggers on `modules`: `total` is the number of modules,
 *   exact in every transaction's snapshot (the unfiltered admin list reads it instead of `count(*)`);
 *   `version` goes up with every statement that inserts, updates, deletes or truncates modules, so a total
 *   counted for a filter stays valid for as long as the version is the same, on every replica.
 * - `ix_modules_year_desc_code`: the order of `sort=-year,code` (nulls last, as the list sorts), so its page
 *   is an index walk that stops after the page rather than a sort of every match.
 */
export class ModuleCounts1763720000000 implements MigrationInterface {
  name = 'ModuleCounts1763720000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE module_stats (
        id boolean PRIMARY KEY DEFAULT true CONSTRAINT ck_module_stats_single_row CHECK (id),
        total bigint NOT NULL,
        version bigint NOT NULL
      )`);
    // Counted under a lock that keeps writers out until the triggers are in place.
    await queryRunner.query(`LOCK TABLE modules IN SHARE MODE`);
    await queryRunner.query(
      `INSERT INTO module_stats (id, total, version) SELECT true, count(*), 1 FROM modules`,
    );
    await queryRunner.query(`
      CREATE FUNCTION module_stats_on_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          UPDATE module_stats SET total = total + (SELECT count(*) FROM changed_rows), version = version + 1;
        ELSIF TG_OP = 'DELETE' THEN
          UPDATE module_stats SET total = total - (SELECT count(*) FROM changed_rows), version = version + 1;
        ELSIF TG_OP = 'TRUNCATE' THEN
          UPDATE module_stats SET total = 0, version = version + 1;
        ELSE
          UPDATE module_stats SET version = version + 1;
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER tr_module_stats_insert AFTER INSERT ON modules REFERENCING NEW TABLE AS changed_rows
      FOR EACH STATEMENT EXECUTE FUNCTION module_stats_on_change()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_module_stats_delete AFTER DELETE ON modules REFERENCING OLD TABLE AS changed_rows
      FOR EACH STATEMENT EXECUTE FUNCTION module_stats_on_change()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_module_stats_update AFTER UPDATE ON modules
      FOR EACH STATEMENT EXECUTE FUNCTION module_stats_on_change()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_module_stats_truncate AFTER TRUNCATE ON modules
      FOR EACH STATEMENT EXECUTE FUNCTION module_stats_on_change()`);
    await queryRunner.query(
      `CREATE INDEX ix_modules_year_desc_code ON modules (year DESC NULLS LAST, code ASC NULLS LAST, id)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ix_modules_year_desc_code`);
    for (const op of ['insert', 'delete', 'update', 'truncate']) {
      await queryRunner.query(`DROP TRIGGER tr_module_stats_${op} ON modules`);
    }
    await queryRunner.query(`DROP FUNCTION module_stats_on_change()`);
    await queryRunner.query(`DROP TABLE module_stats`);
  }
}
