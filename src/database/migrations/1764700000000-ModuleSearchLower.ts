import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The module list's text filters (`query`, `code`) match `lower(col) LIKE lower(pattern)` instead of
 * `col ILIKE pattern` (the same answers: ILIKE lowers both sides the same way), so the trigram GIN indexes are
 * rebuilt on `lower(code)` and `lower(description)`, under the same names. The recheck of each candidate row is a
 * plain LIKE on text lowered once, not a case-folding comparison: about 20 % less time per rare-word search in
 * PostgreSQL (docs/performance.md, seventh round).
 */
export class ModuleSearchLower1764700000000 implements MigrationInterface {
  name = 'ModuleSearchLower1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ix_modules_code_trgm`);
    await queryRunner.query(`DROP INDEX ix_modules_description_trgm`);
    await queryRunner.query(
      `CREATE INDEX ix_modules_code_trgm ON modules USING gin (lower(code) gin_trgm_ops)`,
    );
    await queryRunner.query(
      `CREATE INDEX ix_modules_description_trgm ON modules USING gin (lower(description) gin_trgm_ops)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ix_modules_description_trgm`);
    await queryRunner.query(`DROP INDEX ix_modules_code_trgm`);
    await queryRunner.query(`CREATE INDEX ix_modules_code_trgm ON modules USING gin (code gin_trgm_ops)`);
    await queryRunner.query(
      `CREATE INDEX ix_modules_description_trgm ON modules USING gin (description gin_trgm_ops)`,
    );
  }
}
