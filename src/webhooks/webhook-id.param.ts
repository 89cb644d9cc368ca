import { Param } from '@nestjs/common';
import { IdPipe } from '../core/id.pipe.js';

/** The `webhook_id` path parameter as an exact decimal string (400 unless a positive 64-bit integer). */
export const WebhookId = () => Param('webhook_id', new IdPipe('webhook_id'));
