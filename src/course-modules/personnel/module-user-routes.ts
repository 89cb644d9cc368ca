import { applyDecorators } from '@nestjs/common';
import { ApiOperation, type ApiOperationOptions, ApiQuery } from '@nestjs/swagger';
import { ResponseMessage } from '../../core/decorators.js';
import {
  NOT_A_JSON_OBJECT_MESSAGE,
  PERMISSION_DENIED_MESSAGE,
  UNKNOWN_PROPERTY_MESSAGE,
} from '../../core/errors.js';
import { INVALID_SORT_MESSAGE, PAGING_MESSAGES } from '../../core/query.js';
import { ApiErrors, ApiOk, ApiPagingQuery, ApiSortQuery, type Schema } from '../../openapi/openapi.js';
import { MODULE_NOT_FOUND_MESSAGE } from '../modules/module.errors.js';
import { NOT_MEMBERS_MESSAGE, ROLE_NOT_HELD_MESSAGE } from '../membership/membership.errors.js';
import { USER_SORT_FIELDS } from '../membership/member-list-params.js';
import { INVALID_ROLE_MESSAGE, MODULE_ROLES } from '../modules/module-role.js';
import { USER_IDS_MESSAGES } from '../modules/module-rules.js';
import { EFFECTIVE_STATUSES } from '../modules/effective-status.js';
import {
  DATES_ORDER_MESSAGE,
  INVALID_LIST_STATUS_MESSAGE,
  INVALID_STATUS_MESSAGE,
  timestampMessage,
} from '../membership/membership-status.js';
import { AT_LEAST_ONE_FIELD_MESSAGE } from '../membership/dto/membership-fields.js';

const LIST_MESSAGES = [
  ...PAGING_MESSAGES,
  'query must be given at most once',
  'query must not contain NUL characters',
  INVALID_SORT_MESSAGE,
];
const BODY_MESSAGES = [
  USER_IDS_MESSAGES.required,
  USER_IDS_MESSAGES.tooMany,
  USER_IDS_MESSAGES.invalid,
  UNKNOWN_PROPERTY_MESSAGE,
  NOT_A_JSON_OBJECT_MESSAGE,
];
const UNKNOWN_USER = 'User with ID <id> does not exist';
/** The messages of the membership fields (docs/api.md §15). */
const MEMBERSHIP_MESSAGES = [
  INVALID_STATUS_MESSAGE,
  timestampMessage('starts_at'),
  timestampMessage('ends_at'),
  DATES_ORDER_MESSAGE,
];

/** query, sort and paging of the user lists. */
const ApiUserListQuery = () =>
  applyDecorators(
    ApiQuery({
      name: 'query',
      required: false,
      description: 'Username or email contains this text (case-insensitive, literal).',
      schema: { type: 'string', example: 'smith' },
    }),
    ApiPagingQuery(),
    ApiSortQuery(Object.keys(USER_SORT_FIELDS), 'username (case-insensitive)'),
  );

/**
 * A list of a module's users: its message, query parameters (`role` when `withRole`, `status` when `withStatus`),
 * answer and errors.
 */
export const ApiModuleUserList = (
  message: string,
  operation: ApiOperationOptions,
  data: Schema,
  withRole = false,
  withStatus = false,
) =>
  applyDecorators(
    ResponseMessage(message),
    ApiOperation(operation),
    ApiUserListQuery(),
    // After the shared parameters, where the document has always listed `role`.
    ...(withRole
      ? [
          ApiQuery({
            name: 'role',
            required: false,
            description: 'Only this role; also accepted case-insensitively and in snake case.',
            schema: { type: 'string', enum: [...MODULE_ROLES] },
          }),
        ]
      : []),
    ...(withStatus
      ? [
          ApiQuery({
            name: 'status',
            required: false,
            description: 'Only memberships with this effective status (docs/api.md §15); `all` by default.',
            schema: { type: 'string', enum: [...EFFECTIVE_STATUSES, 'all'], default: 'all' },
          }),
        ]
      : []),
    ApiOk(200, message, data),
    ApiErrors({
      400: [
        ...LIST_MESSAGES,
        ...(withRole ? [INVALID_ROLE_MESSAGE] : []),
        ...(withStatus ? [INVALID_LIST_STATUS_MESSAGE, 'status must be given at most once'] : []),
      ],
      403: [PERMISSION_DENIED_MESSAGE],
      404: [MODULE_NOT_FOUND_MESSAGE],
    }),
  );

/** A role write (assign or remove): its message, answer and errors; `role` is named in the body when `withRole`. */
export const ApiRoleWrite = (
  message: string,
  operation: ApiOperationOptions,
  data: Schema,
  { withRole, removal, membership = false }: { withRole: boolean; removal: boolean; membership?: boolean },
) => {
  const failures: Record<number, string[]> = {
    400: [
      ...BODY_MESSAGES,
      ...(withRole ? [INVALID_ROLE_MESSAGE] : []),
      ...(membership ? MEMBERSHIP_MESSAGES : []),
    ],
    403: [PERMISSION_DENIED_MESSAGE],
    404: [MODULE_NOT_FOUND_MESSAGE, UNKNOWN_USER],
  };
  if (removal) failures[409] = [ROLE_NOT_HELD_MESSAGE];
  return applyDecorators(
    ResponseMessage(message),
    ApiOperation(operation),
    ApiOk(200, message, data),
    ApiErrors(failures),
  );
};

/** `PATCH …/members`: its message, answer and errors (docs/api.md §15). */
export const ApiMembersUpdate = (message: string, operation: ApiOperationOptions, data: Schema) =>
  applyDecorators(
    ResponseMessage(message),
    ApiOperation(operation),
    ApiOk(200, message, data),
    ApiErrors({
      400: [...BODY_MESSAGES, AT_LEAST_ONE_FIELD_MESSAGE, ...MEMBERSHIP_MESSAGES],
      403: [PERMISSION_DENIED_MESSAGE],
      404: [MODULE_NOT_FOUND_MESSAGE, UNKNOWN_USER],
      409: [NOT_MEMBERS_MESSAGE],
    }),
  );
