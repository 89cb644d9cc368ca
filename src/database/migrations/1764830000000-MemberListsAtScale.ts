import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The personnel and student lists of a module in time that does not grow with the module (docs/performance.md,
 * "National scale"):
 *
 * - `user_module_roles.username_key`: `lower(username)` of the row's user, the lists' default order, so that their
 *   first page is 50 entries of an index instead of a sort of every member. Kept by triggers, never written by
 *   the service: a BEFORE trigger sets it on every insert (and on any write of `user_id` or of the key itself)
 *   from the user, read `FOR KEY SHARE`; a rename of a user (its lower-cased username changes) first takes its
 *   row `FOR UPDATE`, so it waits for the transactions that are inserting role rows of that user and keeps new
 *   ones waiting until it commits, then sets the key on the user's role rows (the primary key's prefix).
 * - Indexes: `ix_user_module_roles_module_username` (module_id, username_key, user_id), the personnel list's
 *   order; `ix_user_module_roles_module_role` grows to (module_id, role, username_key, user_id), one role's list
 *   (the student roster) in that order, and still every "people of a module, by role" read it served.
 * - `module_member_counts`: the number of role rows per module and role, so the lists' unfiltered totals are read,
 *   not counted. Statement triggers on `user_module_roles` apply each statement's change (inserts and deletes,
 *   grouped by module and role, in (module, role) order, so two writers never wait on each other's rows in
 *   opposite orders), a row trigger each change of a row's role. The rows are written in the writing
 *   transaction, so a reader sees the count of its own snapshot; writers to one module's memberships wait for each
 *   other's commit on its count rows. A delete never creates a count row: a module being deleted loses its rows
 *   by the foreign key.
 */
export class MemberListsAtScale1764830000000 implements MigrationInterface {
  name = 'MemberListsAtScale1764830000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Usernames stay as they are until the triggers are in place (the ALTER keeps the role rows' writers out).
    await queryRunner.query(`LOCK TABLE users IN SHARE MODE`);
    // The column is filled by a rewrite of the table (a type change with USING), not an UPDATE: one new copy of
    // the table with its indexes built afresh instead of a second version of every row, each index entry
    // inserted one by one (at scale 50, 5.4 s against 14.4 s; the UPDATE doubled the table).
    await queryRunner.query(`
      CREATE FUNCTION user_module_roles_username_key_of(of_user bigint) RETURNS text LANGUAGE plpgsql STABLE AS $$
      BEGIN
        RETURN (SELECT lower(u.username) FROM users u WHERE u.id = of_user);
      END
      $$`);
    // Rebuilt on the new column below: not by the rewrite.
    await queryRunner.query(`DROP INDEX ix_user_module_roles_module_role`);
    await queryRunner.query(`ALTER TABLE user_module_roles ADD COLUMN username_key text`);
    await queryRunner.query(`
      ALTER TABLE user_module_roles
        ALTER COLUMN username_key TYPE text USING user_module_roles_username_key_of(user_id),
        ALTER COLUMN username_key SET NOT NULL`);
    await queryRunner.query(`DROP FUNCTION user_module_roles_username_key_of(bigint)`);
    await queryRunner.query(`
      CREATE FUNCTION user_module_roles_username_key() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- No such user: any key, the foreign key refuses the row at the end of the statement.
        NEW.username_key := coalesce(
          (SELECT lower(u.username) FROM users u WHERE u.id = NEW.user_id FOR KEY SHARE), '');
        RETURN NEW;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER tr_user_module_roles_username_key BEFORE INSERT OR UPDATE OF user_id, username_key
      ON user_module_roles FOR EACH ROW EXECUTE FUNCTION user_module_roles_username_key()`);
    await queryRunner.query(`
      CREATE FUNCTION users_rename_lock() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM 1 FROM users u WHERE u.id = OLD.id FOR UPDATE;
        RETURN NEW;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER tr_users_rename_lock BEFORE UPDATE OF username ON users FOR EACH ROW
      WHEN (lower(OLD.username) IS DISTINCT FROM lower(NEW.username))
      EXECUTE FUNCTION users_rename_lock()`);
    await queryRunner.query(`
      CREATE FUNCTION users_rename_roles() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE user_module_roles SET username_key = lower(NEW.username) WHERE user_id = NEW.id;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER tr_users_rename_roles AFTER UPDATE OF username ON users FOR EACH ROW
      WHEN (lower(OLD.username) IS DISTINCT FROM lower(NEW.username))
      EXECUTE FUNCTION users_rename_roles()`);
    await queryRunner.query(
      `CREATE INDEX ix_user_module_roles_module_role ON user_module_roles (module_id, role, username_key, user_id)`,
    );
    await queryRunner.query(
      `CREATE INDEX ix_user_module_roles_module_username ON user_module_roles (module_id, username_key, user_id)`,
    );

    await queryRunner.query(`
      CREATE TABLE module_member_counts (
        module_id bigint NOT NULL
          CONSTRAINT module_member_counts_module_id_fkey REFERENCES modules (id) ON DELETE CASCADE,
        role module_role NOT NULL,
        members integer NOT NULL,
        PRIMARY KEY (module_id, role)
      )`);
    await queryRunner.query(`
      INSERT INTO module_member_counts (module_id, role, members)
      SELECT module_id, role, count(*) FROM user_module_roles GROUP BY module_id, role`);
    await queryRunner.query(`
      CREATE FUNCTION module_member_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO module_member_counts AS c (module_id, role, members)
        SELECT module_id, role, count(*) FROM added GROUP BY module_id, role ORDER BY module_id, role
        ON CONFLICT (module_id, role) DO UPDATE SET members = c.members + EXCLUDED.members;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION module_member_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM 1 FROM module_member_counts c
        WHERE (c.module_id, c.role) IN (SELECT module_id, role FROM removed)
        ORDER BY c.module_id, c.role FOR UPDATE;
        UPDATE module_member_counts c SET members = c.members - d.n
        FROM (SELECT module_id, role, count(*) AS n FROM removed GROUP BY module_id, role) d
        WHERE c.module_id = d.module_id AND c.role = d.role;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION module_member_counts_move() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO module_member_counts (module_id, role, members) VALUES (NEW.module_id, NEW.role, 0)
        ON CONFLICT (module_id, role) DO NOTHING;
        PERFORM 1 FROM module_member_counts c
        WHERE (c.module_id, c.role) IN ((OLD.module_id, OLD.role), (NEW.module_id, NEW.role))
        ORDER BY c.module_id, c.role FOR UPDATE;
        UPDATE module_member_counts SET members = members - 1 WHERE module_id = OLD.module_id AND role = OLD.role;
        UPDATE module_member_counts SET members = members + 1 WHERE module_id = NEW.module_id AND role = NEW.role;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION module_member_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM module_member_counts;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER tr_module_member_counts_insert AFTER INSERT ON user_module_roles
      REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION module_member_counts_insert()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_module_member_counts_delete AFTER DELETE ON user_module_roles
      REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION module_member_counts_delete()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_module_member_counts_move AFTER UPDATE OF module_id, role ON user_module_roles
      FOR EACH ROW WHEN (OLD.module_id IS DISTINCT FROM NEW.module_id OR OLD.role IS DISTINCT FROM NEW.role)
      EXECUTE FUNCTION module_member_counts_move()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_module_member_counts_truncate AFTER TRUNCATE ON user_module_roles
      FOR EACH STATEMENT EXECUTE FUNCTION module_member_counts_truncate()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const op of ['insert', 'delete', 'move', 'truncate']) {
      await queryRunner.query(`DROP TRIGGER tr_module_member_counts_${op} ON user_module_roles`);
      await queryRunner.query(`DROP FUNCTION module_member_counts_${op}()`);
    }
    await queryRunner.query(`DROP TABLE module_member_counts`);
    await queryRunner.query(`DROP INDEX ix_user_module_roles_module_username`);
    await queryRunner.query(`DROP INDEX ix_user_module_roles_module_role`);
    await queryRunner.query(
      `CREATE INDEX ix_user_module_roles_module_role ON user_module_roles (module_id, role)`,
    );
    await queryRunner.query(`DROP TRIGGER tr_users_rename_roles ON users`);
    await queryRunner.query(`DROP FUNCTION users_rename_roles()`);
    await queryRunner.query(`DROP TRIGGER tr_users_rename_lock ON users`);
    await queryRunner.query(`DROP FUNCTION users_rename_lock()`);
    await queryRunner.query(`DROP TRIGGER tr_user_module_roles_username_key ON user_module_roles`);
    await queryRunner.query(`DROP FUNCTION user_module_roles_username_key()`);
    await queryRunner.query(`ALTER TABLE user_module_roles DROP COLUMN username_key`);
  }
}
