import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * `module_stats` is updated when a transaction commits instead of when its statement runs (docs/performance.md,
 * "Module writes"). The update takes the row's lock, which orders the writers and gives each its own version;
 * taken at the statement, it was held through everything the transaction did afterwards (the audit row, the
 * change event, the commit), and every other module write waited for all of it. Now it is held from the
 * commit's own update to the end of the commit.
 *
 * - The statement-level triggers add the statement's change to two settings local to the transaction
 *   (`module_stats.delta`, the number of modules added minus removed, and `module_stats.pending`): no row is
 *   written and no lock taken. Settings made with `set_config(…, true)` end with the transaction and go back
 *   to their earlier values when a savepoint rolls back, as the rows do.
 * - A deferred constraint trigger on each changed row runs at commit; the first one applies the transaction's
 *   change to `module_stats` (total plus delta, version plus one) and clears it, the rest find nothing to do.
 *   A statement that changed no row leaves nothing to apply.
 * - TRUNCATE still sets the total to 0 at once. PostgreSQL refuses it in a transaction that changed rows of
 *   `modules` before (their deferred trigger events are pending); nothing in the service truncates.
 *
 * What a reader sees is unchanged: the count and the version change together when the writing transaction
 * commits, and row locks still order the writers, so a version still names exactly one set of committed writes.
 */
export class ModuleStatsAtCommit1764300000000 implements MigrationInterface {
  name = 'ModuleStatsAtCommit1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const op of ['insert', 'delete', 'update', 'truncate']) {
      await queryRunner.query(`DROP TRIGGER tr_module_stats_${op} ON modules`);
    }
    await queryRunner.query(`DROP FUNCTION module_stats_on_change()`);
    await queryRunner.query(`
      CREATE FUNCTION module_stats_note() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        change bigint := 0;
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          UPDATE module_stats SET total = 0, version = version + 1;
          PERFORM set_config('module_stats.delta', '0', true);
          PERFORM set_config('module_stats.pending', 'off', true);
          RETURN NULL;
        END IF;
        IF TG_OP = 'INSERT' THEN
          change := (SELECT count(*) FROM changed_rows);
        ELSIF TG_OP = 'DELETE' THEN
          change := -(SELECT count(*) FROM changed_rows);
        END IF;
        PERFORM set_config('module_stats.delta',
          (coalesce(nullif(current_setting('module_stats.delta', true), ''), '0')::bigint + change)::text, true);
        PERFORM set_config('module_stats.pending', 'on', true);
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION module_stats_apply() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('module_stats.pending', true) = 'on' THEN
          UPDATE module_stats
            SET total = total + current_setting('module_stats.delta')::bigint, version = version + 1;
          PERFORM set_config('module_stats.delta', '0', true);
          PERFORM set_config('module_stats.pending', 'off', true);
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER tr_module_stats_note_insert AFTER INSERT ON modules REFERENCING NEW TABLE AS changed_rows
      FOR EACH STATEMENT EXECUTE FUNCTION module_stats_note()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_module_stats_note_delete AFTER DELETE ON modules REFERENCING OLD TABLE AS changed_rows
      FOR EACH STATEMENT EXECUTE FUNCTION module_stats_note()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_module_stats_note_update AFTER UPDATE ON modules
      FOR EACH STATEMENT EXECUTE FUNCTION module_stats_note()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_module_stats_note_truncate AFTER TRUNCATE ON modules
      FOR EACH STATEMENT EXECUTE FUNCTION module_stats_note()`);
    await queryRunner.query(`
      CREATE CONSTRAINT TRIGGER tr_module_stats_apply AFTER INSERT OR UPDATE OR DELETE ON modules
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION module_stats_apply()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER tr_module_stats_apply ON modules`);
    for (const op of ['insert', 'delete', 'update', 'truncate']) {
      await queryRunner.query(`DROP TRIGGER tr_module_stats_note_${op} ON modules`);
    }
    await queryRunner.query(`DROP FUNCTION module_stats_apply()`);
    await queryRunner.query(`DROP FUNCTION module_stats_note()`);
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
    for (const [op, transition] of [
      ['insert', 'REFERENCING NEW TABLE AS changed_rows'],
      ['delete', 'REFERENCING OLD TABLE AS changed_rows'],
      ['update', ''],
      ['truncate', ''],
    ]) {
      await queryRunner.query(`
        CREATE TRIGGER tr_module_stats_${op} AFTER ${op.toUpperCase()} ON modules ${transition}
        FOR EACH STATEMENT EXECUTE FUNCTION module_stats_on_change()`);
    }
  }
}
