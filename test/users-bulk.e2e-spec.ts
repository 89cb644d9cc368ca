// Users in bulk: import, export and the list.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/users-bulk/, one file a part.
import { usersExport } from './e2e/users-bulk/export.js';
import { usersImport } from './e2e/users-bulk/import.js';
import { usersList } from './e2e/users-bulk/list.js';
import { useTestApp } from './support/app.js';

describe('Users import (POST /api/users/import)', () => usersImport(useTestApp()));

describe('Users export (GET /api/users/export.csv)', () => usersExport(useTestApp()));

describe('GET /api/users', () => usersList(useTestApp()));
