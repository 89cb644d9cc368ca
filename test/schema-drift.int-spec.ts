import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../ormconfig.js';
import { runMigrations } from '../src/database/database.js';
import { scratchDatabase } from './support/app.js';

/**
 * The entities are the schema: on a freshly migrated database TypeORM's schema builder finds nothing to
 * change, so `npm run migration:generate` starts from a clean slate. Runs on a database of its own.
 */
describe('schema drift between the migrations and the entities', () => {
  let database: Awaited<ReturnType<typeof scratchDatabase>>;
  let dataSource: DataSource;

  const pendingStatements = async (): Promise<string[]> => {
    const sql = await dataSource.driver.createSchemaBuilder().log();
    return sql.upQueries.map((query) => query.query);
  };

  beforeAll(async () => {
    database = await scratchDatabase('mas_schema');
    await runMigrations(database.url);
    dataSource = new DataSource({ ...dataSourceOptions(database.url, 1), logging: false });
    await dataSource.initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
  });

  it('has no statement to run after the migrations', async () => {
    expect(await pendingStatements()).toEqual([]);
  });

  it('keeps 1 000 histogram entries on every searched expression, so a rare word is estimated as rare', async () => {
    // Migration SearchStatistics: with the default 100, one ANALYZE in ten put a 0.1 % word in the histogram and
    // the module search walked the primary key instead of reading the word's matches.
    const targets = await dataSource.query<{ index: string; target: number }[]>(
      `SELECT c.relname AS index, a.attstattarget AS target
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
       WHERE c.relname IN ('ix_modules_code_trgm', 'ix_modules_description_trgm', 'ix_users_search_trgm')
         AND a.attnum = 1
       ORDER BY 1`,
    );
    expect(targets).toEqual([
      { index: 'ix_modules_code_trgm', target: 1000 },
      { index: 'ix_modules_description_trgm', target: 1000 },
      { index: 'ix_users_search_trgm', target: 1000 },
    ]);
  });

  it('notices a missing index, check and foreign key under the names the migrations give them', async () => {
    await dataSource.query(`DROP INDEX ix_user_module_roles_module_role`);
    await dataSource.query(`ALTER TABLE assignment_files DROP CONSTRAINT assignment_files_size_check`);
    await dataSource.query(`ALTER TABLE assignments DROP CONSTRAINT assignments_module_id_fkey`);
    // Indexes the builder cannot express (expression and GIN opclass indexes) are left to the migrations.
    await dataSource.query(`DROP INDEX ix_modules_code_trgm`);

    const statements = await pendingStatements();
    expect(statements).toHaveLength(3);
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^CREATE INDEX "ix_user_module_roles_module_role" ON "user_module_roles"/),
        expect.stringMatching(/ADD CONSTRAINT "assignment_files_size_check" CHECK/),
        expect.stringMatching(/ADD CONSTRAINT "assignments_module_id_fkey" FOREIGN KEY \("module_id"\)/),
      ]),
    );
  });
});
