import { ValidateBy } from 'class-validator';
import { isSubscribableType } from './webhook-types.js';
import { INVALID_EVENT_TYPE_MESSAGE } from '../events/change-event-types.js';

export const URL_MAX = 2048;
export const TYPES_MAX = 16;
export const DESCRIPTION_MAX = 500;

export const URL_MESSAGE = `url must be an absolute http(s) URL of at most ${URL_MAX} characters`;
export const TYPES_MESSAGE = `types must be a non-empty array of at most ${TYPES_MAX} event types`;
export const DESCRIPTION_MESSAGE = `description must be a string of at most ${DESCRIPTION_MAX} characters, or null`;
export const ENABLED_MESSAGE = 'enabled must be true or false';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

function urlProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || [...value].length > URL_MAX) return URL_MESSAGE;
  // A control character, or a URL of another scheme, is a URL that is not allowed (the service's check).
  if (CONTROL.test(value)) return undefined;
  try {
    new URL(value);
  } catch {
    return URL_MESSAGE;
  }
  return undefined;
}

/**
 * A string of at most 2048 characters that parses as a URL; whether it may be used (scheme, credentials,
 * control characters, addresses) is the service's check: 400 `Webhook URL is not allowed`.
 */
export function IsWebhookUrl() {
  return ValidateBy({
    name: 'isWebhookUrl',
    validator: { validate: (value) => urlProblem(value) === undefined, defaultMessage: () => URL_MESSAGE },
  });
}

function typesProblem(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > TYPES_MAX) return TYPES_MESSAGE;
  if (!value.every((entry) => typeof entry === 'string')) return TYPES_MESSAGE;
  if (!value.every((entry: string) => isSubscribableType(entry))) return INVALID_EVENT_TYPE_MESSAGE;
  return undefined;
}

/** 1-16 change event types, or `*`; an unknown type is `Invalid event type`, as on the feed. */
export function IsWebhookTypes() {
  return ValidateBy({
    name: 'isWebhookTypes',
    validator: {
      validate: (value) => typesProblem(value) === undefined,
      defaultMessage: (args) => typesProblem(args?.value) ?? TYPES_MESSAGE,
    },
  });
}

/** The types as stored: repeats dropped, in the order given; `*` alone when it is among them. */
export function normaliseTypes(types: readonly string[]): string[] {
  return types.includes('*') ? ['*'] : [...new Set(types)];
}

function descriptionOk(value: unknown): boolean {
  return (
    value === null ||
    (typeof value === 'string' && [...value].length <= DESCRIPTION_MAX && !value.includes('\u0000'))
  );
}

export function IsWebhookDescription() {
  return ValidateBy({
    name: 'isWebhookDescription',
    validator: { validate: descriptionOk, defaultMessage: () => DESCRIPTION_MESSAGE },
  });
}
