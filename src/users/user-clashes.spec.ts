import { listClashes, type StoredIdentities } from './user-clashes.js';

const none: StoredIdentities = { usernames: new Set(), emails: new Set() };
const user = (username: string, email = `${username.toLowerCase()}@example.edu`) => ({ username, email });

describe(listClashes.name, () => {
  it('finds nothing in a batch of distinct new users', () => {
    expect(listClashes([user('ann'), user('ben')], none)).toEqual([]);
  });

  it('lists values clashing with stored users, case-insensitively, as sent', () => {
    const stored = { usernames: new Set(['ann']), emails: new Set(['ben@example.edu']) };
    expect(listClashes([user('ANN', 'new@x.org'), user('ben', 'Ben@Example.EDU')], stored)).toEqual([
      'ANN',
      'Ben@Example.EDU',
    ]);
  });

  it('lists values repeated inside the batch once, in their first spelling', () => {
    expect(
      listClashes([user('cat', 'c@x.org'), user('Cat', 'C@X.org'), user('CAT', 'z@x.org')], none),
    ).toEqual(['cat', 'c@x.org']);
  });

  it('keeps request order, an entry’s username before its email', () => {
    const stored = { usernames: new Set(['zed']), emails: new Set(['a@x.org']) };
    expect(
      listClashes([user('dan', 'a@x.org'), user('zed', 'q@x.org'), user('dan', 'r@x.org')], stored),
    ).toEqual(['dan', 'a@x.org', 'zed']);
  });

  it('lists a value both stored and repeated only once', () => {
    const stored = { usernames: new Set(['eve']), emails: new Set<string>() };
    expect(listClashes([user('eve', 'e1@x.org'), user('EVE', 'e2@x.org')], stored)).toEqual(['eve']);
  });

  it('does not mix usernames and emails up', () => {
    const stored = { usernames: new Set(['f@x.org']), emails: new Set(['fay']) };
    expect(listClashes([user('fay', 'f@x.org')], stored)).toEqual([]);
  });
});
