// The people of a module: personnel, students, and the roster's CSV import and export.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/modules-people/, one file a part.
import { personnelTests } from './e2e/modules-people/personnel.js';
import { rosterTests } from './e2e/modules-people/roster.js';
import { studentTests } from './e2e/modules-people/students.js';
import { useTestApp } from './support/app.js';

describe('module personnel', () => personnelTests(useTestApp()));

describe('module students', () => studentTests(useTestApp()));

describe('Roster import and export', () => rosterTests(useTestApp()));
