/** Every change event type (docs/events.md); the `data` of each is described there and in docs/api.md §12. */
export const CHANGE_EVENT_TYPES = [
  'module.created',
  'module.updated',
  'module.deleted',
  'module.members_changed',
  'user.created',
  'user.updated',
  'user.deleted',
] as const;

export type ChangeEventType = (typeof CHANGE_EVENT_TYPES)[number];

export const INVALID_EVENT_TYPE_MESSAGE = 'Invalid event type';

const known = new Set<string>(CHANGE_EVENT_TYPES);

export const isChangeEventType = (value: string): value is ChangeEventType => known.has(value);

/** One event to write: its type and the `data` the feed and the webhooks carry. */
export interface NewChangeEvent {
  type: ChangeEventType;
  data: unknown;
}

/**
 * `module.members_changed`: who joined the module, who left it, and whose role changed (user ids as numbers);
 * with the membership lifecycle (docs/api.md §15) also whose stored status changed (`status_changed`, present when
 * a write changed a membership's status or dates) and whose effective status a passing `starts_at` or `ends_at`
 * changed (`effective`, present only on the events of the time sweep).
 */
export interface MembersChanged {
  module_id: number;
  added: { user_id: number; role: string }[];
  removed: { user_id: number; role: string }[];
  changed: { user_id: number; from: string; to: string }[];
  status_changed?: { user_id: number; from: string; to: string }[];
  effective?: { user_id: number; effective_status: string }[];
}

/** Whether a members change changed anything (an assignment of a role already held does not). */
export const changesMembers = (change: MembersChanged): boolean =>
  change.added.length + change.removed.length + change.changed.length > 0 ||
  change.status_changed !== undefined ||
  (change.effective?.length ?? 0) > 0;
