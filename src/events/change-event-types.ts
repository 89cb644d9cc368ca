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
