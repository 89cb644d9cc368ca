// Users' accounts: create, email addresses, manage, inactive users, people's names and identifiers.
// One file for these, not one each: Jest evaluates the whole application once per test file (docs/testing.md).
// The tests are in test/e2e/users-accounts/, one file a part.
import { usePeopleFields } from './e2e/users-accounts/context.js';
import { createTests } from './e2e/users-accounts/create.js';
import { inactiveUsers, inactiveUsersAndSso } from './e2e/users-accounts/inactive.js';
import { manageTests } from './e2e/users-accounts/manage.js';
import { oneLabelEmailTests } from './e2e/users-accounts/one-label-email.js';
import { peopleFieldTests } from './e2e/users-accounts/people-fields.js';
import { peopleFieldsElsewhereTests } from './e2e/users-accounts/people-fields-elsewhere.js';
import { useTestApp } from './support/app.js';

describe('people fields of a user (docs/api.md §14, §3, §5)', () => {
  const ctx = usePeopleFields(useTestApp());
  peopleFieldTests(ctx);
  peopleFieldsElsewhereTests(ctx);
});

describe('Users API: create and bulk create', () => createTests(useTestApp()));

describe('an email address with a one-label domain (admin@localhost)', () =>
  oneLabelEmailTests(useTestApp()));

describe('Users API: read, update, delete, modules of a user', () => manageTests(useTestApp()));

describe('inactive users (docs/api.md §14)', () => inactiveUsers(useTestApp()));

describe('inactive users and single sign-on (docs/api.md §11, §14)', inactiveUsersAndSso);
