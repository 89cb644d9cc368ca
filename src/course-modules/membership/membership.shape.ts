import { fieldsOf } from '../../core/wire-shape.js';
import { USER_SUMMARY_FIELDS, type UserSummary } from '../../users/user.shape.js';
import { type EffectiveStatus } from '../modules/effective-status.js';
import { type MembershipStatus } from './membership-status.js';
import { type ModuleRole } from '../modules/module-role.js';

/**
 * A membership as the personnel and student lists show it (docs/api.md §15), the one place its fields are
 * written: the mapper (`toPersonnelMember`, membership.mapper.ts) and the OpenAPI schema (`ModulePerson`,
 * membership.schemas.ts) each hold one entry per field, checked against these interfaces when the project compiles
 * (core/wire-shape.ts).
 */
export interface Membership {
  role: ModuleRole;
  status: MembershipStatus;
  starts_at: string | null;
  ends_at: string | null;
  effective_status: EffectiveStatus;
}

/** The membership's fields in wire order. */
export const MEMBERSHIP_FIELDS = fieldsOf<Membership>()([
  'role',
  'status',
  'starts_at',
  'ends_at',
  'effective_status',
] as const);

/** A user in a module's personnel or student list: the User summary, then the membership. */
export type PersonnelMember = UserSummary & Membership;

export const PERSONNEL_MEMBER_FIELDS = fieldsOf<PersonnelMember>()([
  ...USER_SUMMARY_FIELDS,
  ...MEMBERSHIP_FIELDS,
] as const);
