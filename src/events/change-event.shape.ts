import { fieldsOf } from '../core/wire-shape.js';

/**
 * The change event of the contract (docs/api.md §12) and the `data` of each of its types, the one place they are
 * written. `ChangeEventPayloads` maps each type to its `data`: this folder declares the types it owns the shape
 * of, and each feature adds its own beside its resource's shape (module augmentation, in
 * course-modules/modules/module.shape.ts and users/user.shape.ts), so events/ imports no feature while every
 * `record(…)` call is checked against its type's `data`. The OpenAPI schemas (change-event.schemas.ts) and the
 * JSON text the feed builds in SQL (`CHANGE_EVENT_JSON_SQL`, change-feed.repository.ts) hold one entry per
 * type and per field, checked when the project compiles (core/wire-shape.ts).
 */

/**
 * `module.members_changed`: who joined the module, who left it, and whose role changed (user ids as numbers);
 * with the membership lifecycle (docs/api.md §15) also whose stored status changed (`status_changed`, present when
 * a write changed a membership's status or dates) and whose effective status a passing `starts_at` or `ends_at`
 * changed (`effective`, present only on the events of the time sweep).
 */
export interface MembersChanged {
  module_id: number;
  added: MemberRole[];
  removed: MemberRole[];
  changed: MemberChange[];
  status_changed?: MemberChange[];
  effective?: MemberEffectiveStatus[];
}

export interface MemberRole {
  user_id: number;
  role: string;
}

export interface MemberChange {
  user_id: number;
  from: string;
  to: string;
}

export interface MemberEffectiveStatus {
  user_id: number;
  effective_status: string;
}

export const MEMBER_ROLE_FIELDS = fieldsOf<MemberRole>()(['user_id', 'role'] as const);

/** The `data` of each change event type; the features add theirs (see above). */
export interface ChangeEventPayloads {
  'module.members_changed': MembersChanged;
}

/**
 * Every change event type (docs/events.md), in the order the contract lists them: the tuple must name every key of
 * `ChangeEventPayloads`, so a type without its `data`, or `data` without its type, fails to compile.
 */
export const CHANGE_EVENT_TYPES = fieldsOf<ChangeEventPayloads>()([
  'module.created',
  'module.updated',
  'module.deleted',
  'module.members_changed',
  'user.created',
  'user.updated',
  'user.deleted',
] as const);

export type ChangeEventType = (typeof CHANGE_EVENT_TYPES)[number];

/** One event to write: its type and that type's `data`, which the feed and the webhooks carry. */
export type NewChangeEvent = {
  [T in ChangeEventType]: { type: T; data: ChangeEventPayloads[T] };
}[ChangeEventType];

/** An event on the wire: its cursor as `id`, `at` as ISO text, `data` as its type says. */
export type ChangeEventResponse = {
  [T in ChangeEventType]: { id: string; type: T; at: string; data: ChangeEventPayloads[T] };
}[ChangeEventType];

/** An event's fields in the order the feed writes them. */
export const CHANGE_EVENT_FIELDS = fieldsOf<ChangeEventResponse>()(['id', 'type', 'at', 'data'] as const);
