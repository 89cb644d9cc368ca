/** The Session resource as a response schema (see core/openapi.ts). */
import { timestamp } from '../core/openapi.common.js';
import { schema } from '../core/openapi.js';
import { UserSummarySchema } from '../users/user.schemas.js';

export const SessionSchema = schema('Session', {
  type: 'object',
  required: ['token', 'expires_at', 'user'],
  additionalProperties: false,
  properties: {
    token: { type: 'string', description: 'HS256 JWT; send as `Authorization: Bearer <token>`.' },
    expires_at: timestamp,
    user: UserSummarySchema,
  },
});
