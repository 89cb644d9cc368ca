import { namedSchemas } from '../../openapi/openapi.js';
import { storedUser } from '../../testing/fakes.js';
import { USER_SUMMARY_FIELDS } from '../../users/user.shape.js';
import { ModuleRole } from '../modules/module-role.js';
import { toPersonnelMember } from './membership.mapper.js';
import './membership.schemas.js';
import { MembershipStatus } from './membership-status.js';
import { MEMBERSHIP_FIELDS, PERSONNEL_MEMBER_FIELDS } from './membership.shape.js';

const schema = (name: string) => namedSchemas[name] as { required: string[]; properties: object };

/** The membership's tuple (membership.shape.ts) is the order its mapper and its schema write; Module: module.mapper.spec.ts. */
describe('one membership shape', () => {
  it('is the User summary, then the membership, in the mapper and the OpenAPI schema', () => {
    const member = toPersonnelMember({
      ...storedUser(3, 'ada', { givenName: 'Ada', familyName: 'Lovelace' }),
      role: ModuleRole.Tutor,
      memberStatus: MembershipStatus.Active,
      startsAt: null,
      endsAt: null,
      effectiveStatus: 'active',
    });
    expect(PERSONNEL_MEMBER_FIELDS).toEqual([...USER_SUMMARY_FIELDS, ...MEMBERSHIP_FIELDS]);
    expect(Object.keys(member)).toEqual(PERSONNEL_MEMBER_FIELDS);
    expect(schema('ModulePerson').required).toEqual(PERSONNEL_MEMBER_FIELDS);
    expect(Object.keys(schema('ModulePerson').properties)).toEqual(PERSONNEL_MEMBER_FIELDS);
  });
});
