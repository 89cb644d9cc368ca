// Writing modules: create, edit and delete.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/modules-writes/, one file a part.
import { moduleCreateAndEdit } from './e2e/modules-writes/create-edit.js';
import { moduleDeletion } from './e2e/modules-writes/deletion.js';
import { useTestApp } from './support/app.js';

describe('module create and edit', () => moduleCreateAndEdit(useTestApp()));

describe('module deletion', () => moduleDeletion(useTestApp()));
