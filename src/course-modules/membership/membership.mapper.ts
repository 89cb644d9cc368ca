import { type UserSummarySource, toUserSummary } from '../../users/user.mapper.js';
import { type ModuleRole } from '../modules/module-role.js';
import { type MembershipSource } from './membership-status.js';
import { type PersonnelMember } from './membership.shape.js';

/** A member of a personnel or student list: the User summary, then the membership (membership.shape.ts). */
export function toPersonnelMember(
  row: UserSummarySource & { role: ModuleRole } & MembershipSource,
): PersonnelMember {
  return {
    ...toUserSummary(row),
    role: row.role,
    status: row.memberStatus,
    starts_at: row.startsAt?.toISOString() ?? null,
    ends_at: row.endsAt?.toISOString() ?? null,
    effective_status: row.effectiveStatus,
  };
}
