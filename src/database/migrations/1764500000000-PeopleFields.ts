import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * People's names, the identity provider's id and the active flag (docs/api.md §14); usernames up to 128
 * characters (an IdP's `jane.doe@uni.edu`). Existing users get nulls and `active = true`. The added columns have
 * constant defaults, so no row is rewritten; widening a varchar rewrites nothing either.
 */
export class PeopleFields1764500000000 implements MigrationInterface {
  name = 'PeopleFields1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE users ALTER COLUMN username TYPE varchar(128)`);
    await queryRunner.query(`
      ALTER TABLE users
        ADD COLUMN given_name varchar(100),
        ADD COLUMN family_name varchar(100),
        ADD COLUMN display_name varchar(200),
        ADD COLUMN external_id varchar(255),
        ADD COLUMN active boolean NOT NULL DEFAULT true`);
    // Case-sensitive, as IdPs compare their ids; serves SCIM's `externalId eq` and the uniqueness rule.
    await queryRunner.query(`CREATE UNIQUE INDEX uq_users_external_id ON users (external_id)`);
    // The user list's `query` (username, email, the names, external_id): one trigram index over all of them,
    // the expression of USER_SEARCH_TEXT (user-list.repository.ts) to the character. pg_trgm: ModuleSearchIndexes.
    await queryRunner.query(`
      CREATE INDEX ix_users_search_trgm ON users USING gin ((username || ' ' || email || ' ' ||
        coalesce(given_name, '') || ' ' || coalesce(family_name, '') || ' ' || coalesce(display_name, '') || ' ' ||
        coalesce(external_id, '')) gin_trgm_ops)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ix_users_search_trgm`);
    await queryRunner.query(`DROP INDEX uq_users_external_id`);
    await queryRunner.query(`
      ALTER TABLE users
        DROP COLUMN active,
        DROP COLUMN external_id,
        DROP COLUMN display_name,
        DROP COLUMN family_name,
        DROP COLUMN given_name`);
    // A longer username cannot be kept in 64 characters: such a database cannot go back.
    await queryRunner.query(`ALTER TABLE users ALTER COLUMN username TYPE varchar(64)`);
  }
}
