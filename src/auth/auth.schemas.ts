/** The Session resource as a response schema (see openapi/openapi.ts). */
import { timestamp } from '../openapi/common.js';
import { schema } from '../openapi/openapi.js';
import { UserAccountSchema } from '../users/user.schemas.js';

export const SessionSchema = schema('Session', {
  type: 'object',
  required: ['token', 'expires_at', 'user'],
  additionalProperties: false,
  properties: {
    token: { type: 'string', description: 'HS256 JWT; send as `Authorization: Bearer <token>`.' },
    expires_at: timestamp,
    user: UserAccountSchema,
  },
});

const nullableUrl = { type: 'string', format: 'uri', nullable: true } as const;

export const SignInOptionsSchema = schema('SignInOptions', {
  type: 'object',
  required: ['password_login', 'sso'],
  additionalProperties: false,
  properties: {
    password_login: { type: 'boolean', description: 'Whether `POST /api/auth/login` accepts passwords.' },
    sso: {
      type: 'object',
      nullable: true,
      description: 'The identity provider (docs/sso.md); null when single sign-on is off.',
      required: ['issuer', 'client_id', 'scopes', 'authorization_endpoint', 'token_endpoint'],
      additionalProperties: false,
      properties: {
        issuer: { type: 'string', format: 'uri' },
        client_id: {
          type: 'string',
          nullable: true,
          description: 'Public client of the Swagger UI console (authorization code + PKCE), or null.',
        },
        scopes: { type: 'array', items: { type: 'string' } },
        authorization_endpoint: {
          ...nullableUrl,
          description: "From the IdP's discovery document; null while the IdP cannot be reached.",
        },
        token_endpoint: {
          ...nullableUrl,
          description: "From the IdP's discovery document; null while the IdP cannot be reached.",
        },
      },
    },
  },
  example: {
    password_login: true,
    sso: {
      issuer: 'https://login.example.edu/realms/university',
      client_id: 'module-admin-console',
      scopes: ['openid', 'profile', 'email'],
      authorization_endpoint: 'https://login.example.edu/realms/university/protocol/openid-connect/auth',
      token_endpoint: 'https://login.example.edu/realms/university/protocol/openid-connect/token',
    },
  },
});
