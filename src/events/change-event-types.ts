import { CHANGE_EVENT_TYPES, type ChangeEventType, type MembersChanged } from './change-event.shape.js';

export {
  CHANGE_EVENT_TYPES,
  type ChangeEventType,
  type MembersChanged,
  type NewChangeEvent,
} from './change-event.shape.js';

export const INVALID_EVENT_TYPE_MESSAGE = 'Invalid event type';

const known = new Set<string>(CHANGE_EVENT_TYPES);

export const isChangeEventType = (value: string): value is ChangeEventType => known.has(value);

/** Whether a members change changed anything (an assignment of a role already held does not). */
export const changesMembers = (change: MembersChanged): boolean =>
  change.added.length + change.removed.length + change.changed.length > 0 ||
  change.status_changed !== undefined ||
  (change.effective?.length ?? 0) > 0;
