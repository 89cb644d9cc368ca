import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** The trigram indexes' expressions, whose statistics the planner reads for a text search's selectivity. */
const SEARCH_INDEXES = [
  'ix_modules_code_trgm',
  'ix_modules_description_trgm',
  'ix_users_search_trgm',
] as const;

/**
 * A statistics target of 1 000 (instead of 100) on the searched expressions, so a rare word's estimate no longer
 * depends on the luck of ANALYZE's sample. PostgreSQL estimates `lower(description) LIKE '%word%'` from the
 * expression's histogram: with 100 entries a word in 0.1 % of the rows lands in one of them about one ANALYZE in
 * ten, and the estimate jumps from 0.01 % to 1 %, enough for the module search to walk the primary key through
 * 20 000 rows instead of reading the word's 92 matches (on the scale-50 demo data: 3 plans in 30 ANALYZEs, and a
 * benchmark run at 0.06 of the lean side's rate; with 1 000 entries, 30 in 30 read the matches, and a common word
 * still walks). ANALYZE runs here so the plans hold from the migration on (docs/performance.md, "National scale"),
 * but only on a table that has rows: an empty table analysed is recorded as empty (0 rows), which plans made while
 * it fills then trust. On new databases that showed in the test suite: a 6 000-row insert of role rows (a trigger
 * looks each user up) took up to 4 s instead of 0.3–0.4 and ran into the statement timeout in two `npm test`
 * runs of two.
 */
export class SearchStatistics1764840000000 implements MigrationInterface {
  name = 'SearchStatistics1764840000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const index of SEARCH_INDEXES)
      await queryRunner.query(`ALTER INDEX ${index} ALTER COLUMN 1 SET STATISTICS 1000`);
    for (const table of ['modules', 'users']) {
      const [{ filled }] = (await queryRunner.query(`SELECT EXISTS (SELECT FROM ${table}) AS filled`)) as {
        filled: boolean;
      }[];
      if (filled) await queryRunner.query(`ANALYZE ${table}`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const index of SEARCH_INDEXES)
      await queryRunner.query(`ALTER INDEX ${index} ALTER COLUMN 1 SET STATISTICS -1`);
  }
}
