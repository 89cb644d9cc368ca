import { type EffectiveStatus } from '../modules/effective-status.js';
import { type ModuleRole } from '../modules/module-role.js';

/**
 * The membership lifecycle (docs/api.md §15): a role row's stored `status`, and the rows a write reads and
 * writes. What a membership amounts to now, its effective status, is modules/effective-status.ts.
 */

/** A role row's stored status; the values are the wire form and the PostgreSQL enum labels. */
export enum MembershipStatus {
  Active = 'active',
  Inactive = 'inactive',
  Completed = 'completed',
}

export const MEMBERSHIP_STATUSES: readonly MembershipStatus[] = Object.values(MembershipStatus);

export const INVALID_STATUS_MESSAGE = 'status must be one of active, inactive, completed';
export const DATES_ORDER_MESSAGE = 'ends_at must be after starts_at';
export const INVALID_LIST_STATUS_MESSAGE = 'status must be one of active, upcoming, completed, inactive, all';
export const timestampMessage = (field: 'starts_at' | 'ends_at') => `${field} must be an RFC 3339 timestamp`;

/** A membership's lifecycle as a list reads it from a role row (`memberStatus`: the stored status). */
export interface MembershipSource {
  memberStatus: MembershipStatus;
  startsAt: Date | null;
  endsAt: Date | null;
  effectiveStatus: EffectiveStatus;
}

/** A stored membership as a write sees it (decimal user id). */
export interface HeldMembership {
  userId: string;
  role: ModuleRole;
  status: MembershipStatus;
  startsAt: Date | null;
  endsAt: Date | null;
}

/** A membership to write: every column's new value. */
export interface MembershipWrite {
  userId: string;
  role: ModuleRole;
  status: MembershipStatus;
  startsAt: Date | null;
  endsAt: Date | null;
}

/** A module's member with the membership, as the roster import reads them (ModuleRolesRepository.lockMembers). */
export interface Member {
  id: number;
  username: string;
  role: ModuleRole;
  status: MembershipStatus;
  startsAt: Date | null;
  endsAt: Date | null;
}
