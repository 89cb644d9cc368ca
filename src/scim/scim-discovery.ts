import { USER_SCHEMA } from './scim-path.js';

/** Discovery documents (RFC 7644 §4, RFC 7643 §5-7) for this service's Users-only provisioning. */

export const LIST_RESPONSE_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const FILTER_MAX_RESULTS = 200;

const attribute = (
  name: string,
  type: string,
  description: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  name,
  type,
  multiValued: false,
  description,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

export const USER_SCHEMA_ATTRIBUTES = [
  attribute(
    'userName',
    'string',
    'The sign-in name: 3-128 letters, digits and . _ - @ +; unique ignoring case.',
    {
      required: true,
      uniqueness: 'server',
    },
  ),
  attribute(
    'externalId',
    'string',
    "The identity provider's id for the person (Entra ID's objectId); unique.",
    {
      caseExact: true,
      uniqueness: 'server',
    },
  ),
  attribute('name', 'complex', "The person's name.", {
    subAttributes: [
      attribute('givenName', 'string', 'Given name, at most 100 characters.'),
      attribute('familyName', 'string', 'Family name, at most 100 characters.'),
      attribute('formatted', 'string', 'Given and family name joined (read only).', {
        mutability: 'readOnly',
      }),
    ],
  }),
  attribute('displayName', 'string', 'The name shown for the person, at most 200 characters.'),
  attribute('emails', 'complex', 'One address is kept: the primary one, else the work one, else the first.', {
    multiValued: true,
    required: true,
    subAttributes: [
      attribute('value', 'string', 'The address (stored lower-case, unique ignoring case).', {
        required: true,
      }),
      attribute('type', 'string', 'Always "work" when read.', { canonicalValues: ['work'] }),
      attribute('primary', 'boolean', 'Always true when read.'),
    ],
  }),
  attribute('active', 'boolean', 'false: the person keeps account and memberships but cannot sign in.'),
];

export function userSchema(base: string): Record<string, unknown> {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id: USER_SCHEMA,
    name: 'User',
    description: 'A person with an account in the module administration service',
    attributes: USER_SCHEMA_ATTRIBUTES,
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${USER_SCHEMA}` },
  };
}

export function userResourceType(base: string): Record<string, unknown> {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    description: 'User Account',
    schema: USER_SCHEMA,
    schemaExtensions: [],
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
  };
}

export function serviceProviderConfig(base: string): Record<string, unknown> {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: FILTER_MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description:
          'An integration token with the scim scope (POST /api/tokens), sent as Authorization: Bearer',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function listResponse(
  resources: readonly unknown[],
  totalResults: number,
  startIndex: number,
): Record<string, unknown> {
  return {
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}
