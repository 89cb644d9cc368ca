import { AppError, NOTHING_TO_UPDATE_MESSAGE, ValidationFailed } from '../core/errors.js';

export const WEBHOOK_URL_NOT_ALLOWED_MESSAGE = 'Webhook URL is not allowed';

export const WEBHOOK_NOT_FOUND_MESSAGE = 'Webhook not found';

export class WebhookNotFound extends AppError {
  constructor() {
    super(404, WEBHOOK_NOT_FOUND_MESSAGE);
  }
}

/** A URL the rules refuse: scheme, credentials, or an address that is not public (docs/webhooks.md). */
export class WebhookUrlNotAllowed extends ValidationFailed {
  constructor() {
    super(WEBHOOK_URL_NOT_ALLOWED_MESSAGE);
  }
}

export class NothingToUpdate extends ValidationFailed {
  constructor() {
    super(NOTHING_TO_UPDATE_MESSAGE);
  }
}
