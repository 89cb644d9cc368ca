import { CHANGE_EVENT_TYPES } from '../events/change-event-types.js';

/** The change event types a webhook can subscribe to (docs/events.md); `*` stands for all of them. */
export const SUBSCRIBABLE_TYPES = CHANGE_EVENT_TYPES;

export const ALL_TYPES = '*';
/** The type of the event `POST /api/webhooks/{id}/test` sends; delivered whatever the webhook's types. */
export const TEST_EVENT_TYPE = 'webhook.test';

const known = new Set<string>([...SUBSCRIBABLE_TYPES, ALL_TYPES]);
export const isSubscribableType = (value: string): boolean => known.has(value);

/** Whether a webhook subscribed to `types` takes an event of `type`. */
export const takes = (types: readonly string[], type: string): boolean =>
  types.includes(ALL_TYPES) || types.includes(type);
