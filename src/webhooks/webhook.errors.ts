import { fixedError, NOTHING_TO_UPDATE_MESSAGE } from '../core/errors.js';

export const WEBHOOK_URL_NOT_ALLOWED_MESSAGE = 'Webhook URL is not allowed';

export const WEBHOOK_NOT_FOUND_MESSAGE = 'Webhook not found';

export class WebhookNotFound extends fixedError(404, WEBHOOK_NOT_FOUND_MESSAGE) {}

/** A URL the rules refuse: scheme, credentials, or an address that is not public (docs/webhooks.md). */
export class WebhookUrlNotAllowed extends fixedError(400, WEBHOOK_URL_NOT_ALLOWED_MESSAGE) {}

export class NothingToUpdate extends fixedError(400, NOTHING_TO_UPDATE_MESSAGE) {}

/** The URL's host name gave no address (no such name, or DNS did not answer in time): not allowed either. */
export class HostNotResolved extends WebhookUrlNotAllowed {
  constructor(readonly code: string) {
    super();
  }
}
