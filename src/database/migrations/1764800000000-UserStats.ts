import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** The searchable columns as one lower-cased text: USER_SEARCH_TEXT (user-list.repository.ts), to the character. */
const SEARCH_TEXT = `lower(username || ' ' || email || ' ' || coalesce(given_name, '') || ' ' ||
        coalesce(family_name, '') || ' ' || coalesce(display_name, '') || ' ' || coalesce(external_id, ''))`;

/** The same expression as migration PeopleFields created it (for `down`). */
const SEARCH_TEXT_BEFORE = `(username || ' ' || email || ' ' ||
        coalesce(given_name, '') || ' ' || coalesce(family_name, '') || ' ' || coalesce(display_name, '') || ' ' ||
        coalesce(external_id, ''))`;

/**
 * The user list's totals without counting on every request, as `module_stats` does for modules
 * (docs/performance.md, "National scale"):
 *
 * - `user_stats`, one row: `total` is the number of users, `version` goes up with every transaction that
 *   inserts, updates, deletes or truncates users. It is written when the writing transaction commits, as
 *   migration ModuleStatsAtCommit does for modules: statement-level triggers note the change in two settings
 *   local to the transaction, and a deferred constraint trigger applies it once at commit.
 * - `ix_users_search_trgm` rebuilt on the lower-cased text, so the list's text filters are
 *   `lower(text) LIKE lower(pattern)` (ILIKE's answers, a plain LIKE as the recheck of each candidate row, as the
 *   module search since ModuleSearchLower); `username` and `email` filters use it too.
 */
export class UserStats1764800000000 implements MigrationInterface {
  name = 'UserStats1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE user_stats (
        id boolean PRIMARY KEY DEFAULT true CONSTRAINT ck_user_stats_single_row CHECK (id),
        total bigint NOT NULL,
        version bigint NOT NULL
      )`);
    // Counted under a lock that keeps writers out until the triggers are in place.
    await queryRunner.query(`LOCK TABLE users IN SHARE MODE`);
    await queryRunner.query(
      `INSERT INTO user_stats (id, total, version) SELECT true, count(*), 1 FROM users`,
    );
    await queryRunner.query(`
      CREATE FUNCTION user_stats_note() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        change bigint := 0;
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          UPDATE user_stats SET total = 0, version = version + 1;
          PERFORM set_config('user_stats.delta', '0', true);
          PERFORM set_config('user_stats.pending', 'off', true);
          RETURN NULL;
        END IF;
        IF TG_OP = 'INSERT' THEN
          change := (SELECT count(*) FROM changed_rows);
        ELSIF TG_OP = 'DELETE' THEN
          change := -(SELECT count(*) FROM changed_rows);
        END IF;
        PERFORM set_config('user_stats.delta',
          (coalesce(nullif(current_setting('user_stats.delta', true), ''), '0')::bigint + change)::text, true);
        PERFORM set_config('user_stats.pending', 'on', true);
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION user_stats_apply() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('user_stats.pending', true) = 'on' THEN
          UPDATE user_stats
            SET total = total + current_setting('user_stats.delta')::bigint, version = version + 1;
          PERFORM set_config('user_stats.delta', '0', true);
          PERFORM set_config('user_stats.pending', 'off', true);
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER tr_user_stats_note_insert AFTER INSERT ON users REFERENCING NEW TABLE AS changed_rows
      FOR EACH STATEMENT EXECUTE FUNCTION user_stats_note()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_user_stats_note_delete AFTER DELETE ON users REFERENCING OLD TABLE AS changed_rows
      FOR EACH STATEMENT EXECUTE FUNCTION user_stats_note()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_user_stats_note_update AFTER UPDATE ON users
      FOR EACH STATEMENT EXECUTE FUNCTION user_stats_note()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_user_stats_note_truncate AFTER TRUNCATE ON users
      FOR EACH STATEMENT EXECUTE FUNCTION user_stats_note()`);
    await queryRunner.query(`
      CREATE CONSTRAINT TRIGGER tr_user_stats_apply AFTER INSERT OR UPDATE OR DELETE ON users
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION user_stats_apply()`);
    await queryRunner.query(`DROP INDEX ix_users_search_trgm`);
    await queryRunner.query(
      `CREATE INDEX ix_users_search_trgm ON users USING gin ((${SEARCH_TEXT}) gin_trgm_ops)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ix_users_search_trgm`);
    await queryRunner.query(
      `CREATE INDEX ix_users_search_trgm ON users USING gin (${SEARCH_TEXT_BEFORE} gin_trgm_ops)`,
    );
    await queryRunner.query(`DROP TRIGGER tr_user_stats_apply ON users`);
    for (const op of ['insert', 'delete', 'update', 'truncate']) {
      await queryRunner.query(`DROP TRIGGER tr_user_stats_note_${op} ON users`);
    }
    await queryRunner.query(`DROP FUNCTION user_stats_apply()`);
    await queryRunner.query(`DROP FUNCTION user_stats_note()`);
    await queryRunner.query(`DROP TABLE user_stats`);
  }
}
