import { type MembersChanged } from '../../events/change-event-types.js';
import { type MembershipChange } from './dto/membership-fields.js';
import { MembershipStatus } from './membership-status.js';
import { DatesOutOfOrder } from './membership.errors.js';
import { type ModuleRole } from '../modules/module-role.js';
import { type HeldMembership, type MembershipWrite } from './membership-status.js';

/** How a write changes memberships, and the `module.members_changed` event that reports it (docs/api.md §12, §15). */

export const membersChange = (moduleId: string): MembersChanged => ({
  module_id: Number(moduleId),
  added: [],
  removed: [],
  changed: [],
});

/** The membership `change` makes of `held` (undefined: a new one) with `role`; 400 when its dates are out of order. */
export function membershipAfter(
  userId: string,
  role: ModuleRole,
  change: MembershipChange,
  held: HeldMembership | undefined,
): MembershipWrite {
  const write: MembershipWrite = {
    userId,
    role,
    status: change.status ?? held?.status ?? MembershipStatus.Active,
    startsAt: change.startsAt !== undefined ? change.startsAt : (held?.startsAt ?? null),
    endsAt: change.endsAt !== undefined ? change.endsAt : (held?.endsAt ?? null),
  };
  if (write.startsAt !== null && write.endsAt !== null && write.endsAt.getTime() <= write.startsAt.getTime())
    throw new DatesOutOfOrder();
  return write;
}

const time = (date: Date | null) => (date === null ? null : date.getTime());

/** Whether a write changes a stored membership's lifecycle (status or dates). */
export const lifecycleChanged = (held: HeldMembership, write: MembershipWrite) =>
  held.status !== write.status ||
  time(held.startsAt) !== time(write.startsAt) ||
  time(held.endsAt) !== time(write.endsAt);

/** The lifecycle fields a request gave, for the audit summary. */
export function givenFields(change: MembershipChange): Record<string, unknown> {
  const given: Record<string, unknown> = {};
  if (change.status !== undefined) given.status = change.status;
  if (change.startsAt !== undefined) given.starts_at = change.startsAt?.toISOString() ?? null;
  if (change.endsAt !== undefined) given.ends_at = change.endsAt?.toISOString() ?? null;
  return given;
}

/**
 * The members change of writing `writes` over `held`, for the users whose row was `written`: who was added, whose
 * role changed, and (when a stored membership's status or dates changed) whose status changed.
 */
export function changeOf(
  moduleId: string,
  held: ReadonlyMap<string, HeldMembership>,
  writes: readonly MembershipWrite[],
  written: readonly string[],
): MembersChanged {
  const change = membersChange(moduleId);
  const byUser = new Map(writes.map((write) => [write.userId, write]));
  for (const userId of written) {
    const write = byUser.get(userId)!;
    const before = held.get(userId);
    if (before === undefined) {
      change.added.push({ user_id: Number(userId), role: write.role });
      continue;
    }
    if (before.role !== write.role)
      change.changed.push({ user_id: Number(userId), from: before.role, to: write.role });
    if (lifecycleChanged(before, write)) {
      change.status_changed ??= [];
      if (before.status !== write.status)
        change.status_changed.push({ user_id: Number(userId), from: before.status, to: write.status });
    }
  }
  return change;
}
