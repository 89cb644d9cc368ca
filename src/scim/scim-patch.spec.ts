import { type ScimError } from './scim.errors.js';
import { applyPatch, readPatchBody } from './scim-patch.js';
import { type ScimUserFields } from './scim-user.js';

const JANE: ScimUserFields = {
  userName: 'jane',
  email: 'jane@uni.edu',
  givenName: 'Jane',
  familyName: 'Doe',
  displayName: 'Jane Doe',
  externalId: 'ext-1',
  active: true,
};

const patch = (...operations: unknown[]) => applyPatch(JANE, readPatchBody({ Operations: operations }));
const refusal = (run: () => unknown) => {
  try {
    run();
    return 'applied';
  } catch (error) {
    return `${(error as ScimError).scimType}: ${(error as ScimError).message}`;
  }
};

describe(applyPatch.name, () => {
  it('takes ops in any case and Entra ID string booleans', () => {
    expect(patch({ op: 'Replace', path: 'active', value: 'False' }).active).toBe(false);
    expect(patch({ op: 'REPLACE', path: 'active', value: 'tRUE' }).active).toBe(true);
    expect(patch({ op: 'Add', path: 'displayName', value: 'JD' }).displayName).toBe('JD');
  });

  it("applies Okta's path-less {active: false} and Entra's path-less dotted keys", () => {
    expect(patch({ op: 'replace', value: { active: false } })).toEqual({ ...JANE, active: false });
    expect(
      patch({
        op: 'Add',
        value: {
          'name.givenName': 'Janet',
          'emails[type eq "work"].value': 'Janet@Uni.edu',
          'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department': 'CS',
        },
      }),
    ).toEqual({ ...JANE, givenName: 'Janet', email: 'janet@uni.edu' });
  });

  it('merges a nested name object, keeping the sub-attributes it does not name', () => {
    expect(patch({ op: 'replace', value: { name: { familyName: 'Smith' } } })).toEqual({
      ...JANE,
      familyName: 'Smith',
    });
    expect(patch({ op: 'replace', path: 'NAME', value: { GivenName: 'J' } }).givenName).toBe('J');
  });

  it('treats attribute names case-insensitively and strips the core schema URN', () => {
    expect(patch({ op: 'replace', path: 'USERNAME', value: 'jdoe' }).userName).toBe('jdoe');
    expect(
      patch({ op: 'replace', path: 'urn:ietf:params:scim:schemas:core:2.0:User:displayName', value: 'X' })
        .displayName,
    ).toBe('X');
  });

  it('keeps one address: an added work or primary address replaces it, an added home address does not', () => {
    expect(patch({ op: 'add', path: 'emails', value: [{ value: 'Home@x.org', type: 'home' }] })).toEqual(
      JANE,
    );
    expect(patch({ op: 'add', path: 'emails', value: [{ value: 'Work@x.org', type: 'work' }] }).email).toBe(
      'work@x.org',
    );
    expect(
      patch({
        op: 'replace',
        path: 'emails',
        value: [
          { value: 'a@x.org', type: 'home' },
          { value: 'b@x.org', primary: 'True' },
        ],
      }).email,
    ).toBe('b@x.org');
  });

  it('changes nothing for valid paths it does not keep', () => {
    expect(
      patch(
        { op: 'add', path: 'title', value: 'Dr' },
        { op: 'replace', path: 'emails[type eq "home"].value', value: 'h@x.org' },
        { op: 'add', path: 'phoneNumbers[type eq "work"].value', value: '1' },
        { op: 'replace', path: 'name.middleName', value: 'Q' },
      ),
    ).toEqual(JANE);
  });

  it('removes names and ids, and refuses to remove userName, emails or active', () => {
    expect(patch({ op: 'remove', path: 'name' })).toEqual({ ...JANE, givenName: null, familyName: null });
    expect(patch({ op: 'remove', path: 'externalId' }).externalId).toBeNull();
    expect(refusal(() => patch({ op: 'remove', path: 'userName' }))).toBe(
      'invalidValue: userName is required',
    );
    expect(refusal(() => patch({ op: 'remove', path: 'emails[type eq "work"].value' }))).toBe(
      'invalidValue: A user needs an email address (emails[].value)',
    );
    expect(refusal(() => patch({ op: 'remove', path: 'active' }))).toBe(
      'invalidValue: active cannot be removed',
    );
    expect(refusal(() => patch({ op: 'remove' }))).toBe('noTarget: A remove operation needs a path');
  });

  it('refuses bad bodies, ops, paths and values with their scimType', () => {
    expect(refusal(() => readPatchBody({}))).toMatch(/^invalidSyntax/);
    expect(refusal(() => readPatchBody({ Operations: [] }))).toMatch(/^invalidSyntax/);
    expect(refusal(() => readPatchBody({ Operations: Array(101).fill({ op: 'add', value: {} }) }))).toMatch(
      /^invalidSyntax/,
    );
    expect(refusal(() => patch({ op: 'move', path: 'active', value: true }))).toMatch(/^invalidSyntax/);
    expect(refusal(() => patch({ op: 'replace', path: 'emails[type eq', value: 'x' }))).toMatch(
      /^invalidPath/,
    );
    expect(refusal(() => patch({ op: 'replace', path: 'a.b.c', value: 'x' }))).toMatch(/^invalidPath/);
    expect(refusal(() => patch({ op: 'replace', path: 'active', value: 'yes' }))).toMatch(/^invalidValue/);
    expect(refusal(() => patch({ op: 'replace', value: 'not an object' }))).toMatch(/^invalidValue/);
    expect(refusal(() => patch({ op: 'replace', path: 'userName', value: 'a b' }))).toMatch(/^invalidValue/);
  });

  it('applies all operations in order on a copy', () => {
    const copy = { ...JANE };
    expect(
      applyPatch(
        copy,
        readPatchBody({
          Operations: [
            { op: 'replace', path: 'displayName', value: 'A' },
            { op: 'replace', path: 'displayName', value: 'B' },
          ],
        }),
      ).displayName,
    ).toBe('B');
    expect(copy).toEqual(JANE);
  });
});
