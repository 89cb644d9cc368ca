import { AppError, ValidationFailed } from '../core/errors.js';

export const WEBHOOK_URL_NOT_ALLOWED_MESSAGE = 'Webhook URL is not allowed';

export class WebhookNotFound extends AppError {
  constructor() {
    super(404, 'Webhook not found');
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
    super('At least one field must be provided');
  }
}
