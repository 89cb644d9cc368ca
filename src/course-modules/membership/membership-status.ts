import { type ModuleRole } from '../modules/module-role.js';

/**
 * The membership lifecycle (docs/api.md §15): a role row's stored `status` and its effective status. The
 * effective status is defined once, in SQL (`membership_effective`, migration MembershipLifecycle); every
 * statement that lists, checks or counts memberships uses the fragments below, so they cannot disagree.
 */

/** A role row's stored status; the values are the wire form and the PostgreSQL enum labels. */
export enum MembershipStatus {
  Active = 'active',
  Inactive = 'inactive',
  Completed = 'completed',
}

export const MEMBERSHIP_STATUSES: readonly MembershipStatus[] = Object.values(MembershipStatus);

/** What a membership amounts to now. */
export type EffectiveStatus = 'active' | 'upcoming' | 'completed' | 'inactive';

export const EFFECTIVE_STATUSES: readonly EffectiveStatus[] = ['active', 'upcoming', 'completed', 'inactive'];

export const INVALID_STATUS_MESSAGE = 'status must be one of active, inactive, completed';
export const DATES_ORDER_MESSAGE = 'ends_at must be after starts_at';
export const INVALID_LIST_STATUS_MESSAGE = 'status must be one of active, upcoming, completed, inactive, all';
export const INVALID_MY_STATUS_MESSAGE = 'status must be one of active, completed, upcoming';
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

/** The effective status of the role row aliased `row`, at `at` (an SQL expression; the statement's time by default). */
export const effectiveStatusOf = (row: string, at = 'now()') =>
  `membership_effective(${row}.status, ${row}.starts_at, ${row}.ends_at, ${at})`;

/** The role row `row` grants rights (its effective status is `active`). */
export const grantsRights = (row: string) => `${effectiveStatusOf(row)} = 'active'`;

/** The role row `row` lets its member read the module (effective `active` or `completed`). */
export const grantsRead = (row: string) => `${effectiveStatusOf(row)} IN ('active', 'completed')`;
