import { type ChangeEventType } from './change-event-types.js';

/** An event on the wire (docs/api.md §12): its cursor as `id`, `at` as ISO text. The feed route builds it in SQL
 * (`ChangeEventsRepository.readPageJson`). */
export interface ChangeEventResponse {
  id: string;
  type: ChangeEventType;
  at: string;
  data: unknown;
}
