import { USER_SCHEMA_ATTRIBUTES } from './scim-discovery.js';
import { SCIM_CONTENT_TYPE } from './scim.errors.js';

/**
 * The SCIM routes in the OpenAPI document (added when SCIM_ENABLED=true): SCIM's own resources and errors, not
 * the envelope, so they are written here rather than derived from the controller's decorators.
 */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const scimJson = (schema: unknown, example?: unknown) => ({
  [SCIM_CONTENT_TYPE]: { schema, ...(example === undefined ? {} : { example }) },
});

const USER_EXAMPLE = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  id: '2',
  externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
  userName: 'jane.doe@uni.edu',
  name: { givenName: 'Jane', familyName: 'Doe', formatted: 'Jane Doe' },
  displayName: 'Jane Doe',
  emails: [{ value: 'jane.doe@uni.edu', type: 'work', primary: true }],
  active: true,
  meta: {
    resourceType: 'User',
    created: '2026-11-21T08:41:00.123Z',
    lastModified: '2026-11-21T08:41:00.123Z',
    location: 'https://modules.uni.edu/api/scim/v2/Users/2',
  },
};

const schemas = {
  ScimUser: {
    type: 'object',
    description: `A SCIM User (RFC 7643 §4.1); null attributes are left out. Attributes: ${USER_SCHEMA_ATTRIBUTES.map((a) => a.name).join(', ')}.`,
    required: ['schemas', 'id', 'userName', 'emails', 'active', 'meta'],
    properties: {
      schemas: { type: 'array', items: { type: 'string' } },
      id: { type: 'string', description: 'The decimal user id.' },
      externalId: { type: 'string' },
      userName: { type: 'string' },
      name: {
        type: 'object',
        properties: {
          givenName: { type: 'string' },
          familyName: { type: 'string' },
          formatted: { type: 'string' },
        },
      },
      displayName: { type: 'string' },
      emails: {
        type: 'array',
        items: {
          type: 'object',
          properties: { value: { type: 'string' }, type: { type: 'string' }, primary: { type: 'boolean' } },
        },
      },
      active: { type: 'boolean' },
      meta: {
        type: 'object',
        properties: {
          resourceType: { type: 'string' },
          created: { type: 'string', format: 'date-time' },
          lastModified: { type: 'string', format: 'date-time' },
          location: { type: 'string', format: 'uri' },
        },
      },
    },
    example: USER_EXAMPLE,
  },
  ScimListResponse: {
    type: 'object',
    required: ['schemas', 'totalResults', 'startIndex', 'itemsPerPage', 'Resources'],
    properties: {
      schemas: { type: 'array', items: { type: 'string' } },
      totalResults: { type: 'integer' },
      startIndex: { type: 'integer' },
      itemsPerPage: { type: 'integer' },
      Resources: { type: 'array', items: ref('ScimUser') },
    },
  },
  ScimPatchOp: {
    type: 'object',
    required: ['Operations'],
    properties: {
      schemas: { type: 'array', items: { type: 'string' } },
      Operations: {
        type: 'array',
        minItems: 1,
        maxItems: 100,
        items: {
          type: 'object',
          required: ['op'],
          properties: {
            op: { type: 'string', description: 'add, replace or remove, in any case.' },
            path: { type: 'string' },
            value: {},
          },
        },
      },
    },
    example: {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', value: { active: false } }],
    },
  },
  ScimError: {
    type: 'object',
    required: ['schemas', 'status', 'detail'],
    properties: {
      schemas: {
        type: 'array',
        items: { type: 'string', enum: ['urn:ietf:params:scim:api:messages:2.0:Error'] },
      },
      status: { type: 'string', example: '404' },
      scimType: {
        type: 'string',
        enum: ['invalidSyntax', 'invalidFilter', 'invalidPath', 'invalidValue', 'uniqueness', 'noTarget'],
      },
      detail: { type: 'string', example: 'User not found' },
    },
  },
  ScimDocument: { type: 'object', additionalProperties: true, description: 'A SCIM discovery document.' },
};

const error = (description: string) => ({ description, content: scimJson(ref('ScimError')) });
const COMMON = {
  400: error('invalidSyntax (a malformed body), invalidValue, invalidFilter, invalidPath, noTarget'),
  401: error('Authentication required | Invalid or expired token (a user token is refused too)'),
  403: error('This token may not use SCIM'),
  413: error('Request body too large'),
  415: error('Unsupported content type'),
  500: error('An internal server error occurred'),
};
const NOT_FOUND = { 404: error('User not found (any id that is not a user id, GUIDs included)') };
const ADMIN = {
  403: error('This token may not use SCIM | Administrators are managed in the service, not through SCIM'),
};
const ID = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description: 'The user id as SCIM writes it (a decimal string).',
};
/** One operation; `method` is the ScimController method that serves it (operationId `Scim.<method>`). */
const op = (
  method: string,
  summary: string,
  { 403: forbidden = COMMON[403], ...responses }: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => ({
  tags: ['SCIM'],
  summary,
  operationId: `Scim.${method}`,
  security: [{ bearer: [] }],
  ...extra,
  responses: { ...responses, ...COMMON, 403: forbidden },
});
const ok = (schema: unknown, description = 'OK') => ({ 200: { description, content: scimJson(schema) } });
const userBody = {
  required: true,
  content: { ...scimJson(ref('ScimUser')), 'application/json': { schema: ref('ScimUser') } },
};

const paths = {
  '/api/scim/v2/ServiceProviderConfig': {
    get: op('serviceProviderConfig', 'What the service supports', ok(ref('ScimDocument'))),
  },
  '/api/scim/v2/ResourceTypes': {
    get: op('resourceTypes', 'The resource types (User)', ok(ref('ScimDocument'))),
  },
  '/api/scim/v2/Schemas': { get: op('schemas', 'The User schema', ok(ref('ScimDocument'))) },
  '/api/scim/v2/Users': {
    get: op('list', 'List or find users', ok(ref('ScimListResponse')), {
      parameters: [
        {
          name: 'filter',
          in: 'query',
          schema: { type: 'string', example: 'userName eq "jane.doe@uni.edu"' },
          description:
            'eq on userName, externalId, id, emails.value, emails[type eq "work"].value, joined by and.',
        },
        { name: 'startIndex', in: 'query', schema: { type: 'integer', default: 1 } },
        { name: 'count', in: 'query', schema: { type: 'integer', default: 100, maximum: 200 } },
      ],
    }),
    post: op(
      'create',
      'Create a user (no password, not admin)',
      {
        201: { description: 'Created; Location is meta.location', content: scimJson(ref('ScimUser')) },
        409: error('uniqueness'),
      },
      { requestBody: userBody },
    ),
  },
  '/api/scim/v2/Users/{id}': {
    get: op('get', 'Read a user', { ...ok(ref('ScimUser')), ...NOT_FOUND }, { parameters: [ID] }),
    put: op(
      'replace',
      'Replace a user',
      { ...ok(ref('ScimUser')), ...NOT_FOUND, ...ADMIN, 409: error('uniqueness') },
      {
        parameters: [ID],
        requestBody: userBody,
      },
    ),
    patch: op(
      'patch',
      'Change a user (all operations or none)',
      { ...ok(ref('ScimUser')), ...NOT_FOUND, ...ADMIN, 409: error('uniqueness') },
      {
        parameters: [ID],
        requestBody: {
          required: true,
          content: { ...scimJson(ref('ScimPatchOp')), 'application/json': { schema: ref('ScimPatchOp') } },
        },
      },
    ),
    delete: op(
      'remove',
      'Delete a user',
      { 204: { description: 'Deleted' }, ...NOT_FOUND, ...ADMIN },
      { parameters: [ID] },
    ),
  },
  '/api/scim/v2/Groups': {
    get: op('groups', 'No groups: always an empty list', ok(ref('ScimListResponse'))),
  },
};

/** What the OpenAPI document gains when SCIM is on. */
export const scimOpenApi = { paths, schemas };
