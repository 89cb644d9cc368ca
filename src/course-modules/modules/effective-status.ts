/**
 * What a membership amounts to now (docs/api.md §15), and which role rows grant rights in a module or let their
 * member read it: the SQL side of the access rule (module-access.ts). The effective status is defined once, in SQL
 * (`membership_effective`, migration MembershipLifecycle); every statement that lists, checks or counts
 * memberships uses the fragments below, so they cannot disagree. The stored `status` is membership/'s
 * (membership-status.ts).
 */

/** What a membership amounts to now. */
export type EffectiveStatus = 'active' | 'upcoming' | 'completed' | 'inactive';

export const EFFECTIVE_STATUSES: readonly EffectiveStatus[] = ['active', 'upcoming', 'completed', 'inactive'];

/** The effective status of the role row aliased `row`, at `at` (an SQL expression; the statement's time by default). */
export const effectiveStatusOf = (row: string, at = 'now()') =>
  `membership_effective(${row}.status, ${row}.starts_at, ${row}.ends_at, ${at})`;

/** The role row `row` grants rights (its effective status is `active`). */
export const grantsRights = (row: string) => `${effectiveStatusOf(row)} = 'active'`;

/** The role row `row` lets its member read the module (effective `active` or `completed`). */
export const grantsRead = (row: string) => `${effectiveStatusOf(row)} IN ('active', 'completed')`;
