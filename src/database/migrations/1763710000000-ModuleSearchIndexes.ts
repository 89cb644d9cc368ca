import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Indexes for the module list's filters: trigram GIN indexes serve the literal-substring ILIKE filters on
 * code and description (`query`, `code`), a b-tree serves `year`. pg_trgm is a trusted extension, so the
 * database owner can create it without superuser rights. See docs/sql/modules.md for the plans.
 */
export class ModuleSearchIndexes1763710000000 implements MigrationInterface {
  name = 'ModuleSearchIndexes1763710000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await queryRunner.query(`CREATE INDEX ix_modules_code_trgm ON modules USING gin (code gin_trgm_ops)`);
    await queryRunner.query(
      `CREATE INDEX ix_modules_description_trgm ON modules USING gin (description gin_trgm_ops)`,
    );
    await queryRunner.query(`CREATE INDEX ix_modules_year ON modules (year)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ix_modules_year`);
    await queryRunner.query(`DROP INDEX ix_modules_description_trgm`);
    await queryRunner.query(`DROP INDEX ix_modules_code_trgm`);
    // The extension stays: other indexes may use it.
  }
}
