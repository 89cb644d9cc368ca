/** The integration token resources as response schemas (see openapi/openapi.ts). */
import { id, timestamp } from '../openapi/common.js';
import { schema } from '../openapi/openapi.js';
import { TOKEN_SCOPES } from './token-rules.js';

const nullableTimestamp = (description: string) => ({
  type: 'string',
  format: 'date-time',
  nullable: true,
  description,
  example: null,
});

const tokenProperties = {
  id,
  name: { type: 'string', example: 'Entra ID provisioning' },
  scopes: { type: 'array', items: { type: 'string', enum: [...TOKEN_SCOPES] }, example: ['scim'] },
  created_at: timestamp,
  expires_at: nullableTimestamp('After this instant the token is refused; null: never.'),
  last_used_at: nullableTimestamp('Set on the first use, then at most once a minute; null: never used.'),
};
const tokenRequired = Object.keys(tokenProperties);

export const TokenSchema = schema('IntegrationToken', {
  type: 'object',
  required: tokenRequired,
  additionalProperties: false,
  properties: tokenProperties,
});

export const CreatedTokenSchema = schema('CreatedIntegrationToken', {
  type: 'object',
  required: [...tokenRequired, 'token'],
  additionalProperties: false,
  properties: {
    ...tokenProperties,
    token: {
      type: 'string',
      pattern: '^mas_[A-Za-z0-9_-]{43}$',
      description: 'Send as `Authorization: Bearer <token>`. Shown only in this answer: store it now.',
      example: 'mas_Xq3bV0c9sJ2mZkP1r7uYtW4nE6aD8fG0hL5iK2oQ1pA',
    },
  },
});

export const TokenListSchema = schema('IntegrationTokenList', { type: 'array', items: TokenSchema });
