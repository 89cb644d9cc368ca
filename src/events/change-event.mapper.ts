import { type ChangeEventType } from './change-event-types.js';
import { type StoredChangeEvent } from './change-events.repository.js';
import { encodeCursor } from './feed-cursor.js';

/** An event on the wire (docs/api.md §12): its cursor as `id`, `at` as ISO text. The feed route builds the same
 * shape in SQL (`ChangeEventsRepository.readPageJson`); this mapper is for events read as objects. */
export interface ChangeEventResponse {
  id: string;
  type: ChangeEventType;
  at: string;
  data: unknown;
}

export function toChangeEventResponse(event: StoredChangeEvent): ChangeEventResponse {
  return { id: encodeCursor(event), type: event.type, at: event.at.toISOString(), data: event.data };
}
