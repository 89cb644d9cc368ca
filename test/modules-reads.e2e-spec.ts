// Reading modules: the list and search, one module, the JSON PostgreSQL builds, and the answers when the database fails.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/modules-reads/, one file a part.
import { useModuleList } from './e2e/modules-reads/context.js';
import { databaseFailureTests } from './e2e/modules-reads/database-failures.js';
import { moduleJsonTests } from './e2e/modules-reads/json.js';
import { listTests } from './e2e/modules-reads/list.js';
import { listFilterAndSortTests } from './e2e/modules-reads/list-filters-and-sort.js';
import { listPagingAndTotalTests } from './e2e/modules-reads/list-paging-and-totals.js';
import { moduleReadTests } from './e2e/modules-reads/read.js';
import { useTestApp } from './support/app.js';

describe('GET /api/modules', () => {
  const ctx = useModuleList(useTestApp());
  listTests(ctx);
  listFilterAndSortTests(ctx);
  listPagingAndTotalTests(ctx);
});

describe('module reads', () => moduleReadTests(useTestApp()));

describe('module JSON built by PostgreSQL', () => moduleJsonTests(useTestApp()));

describe('modules when the database fails', databaseFailureTests);
