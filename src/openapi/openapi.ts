/**
 * OpenAPI conventions. The document is built from decorators only (no Swagger CLI plugin, which the plain
 * `tsc` build and ts-jest do not run), so everything a client needs is declared explicitly:
 *
 * - Request DTOs: `@ApiProperty({ ... })` / `@ApiPropertyOptional` on every field, with the validation limits
 *   (`minLength`, `maxLength`, `pattern`, `minimum`, `maximum`, `enum`, `minItems`, `maxItems`, `nullable`) and an
 *   `example`.
 * - Controllers: `@ApiTags('Modules')`; on each handler `@ApiOperation({ summary })`, `@ApiOk(status, message,
 *   dataSchema)` for the success response and `@ApiErrors({ 400: [...messages], 404: [...] })` for the failures.
 *   `@ApiAuthenticated()` adds bearer security with the 401 responses.
 * - Response data schemas are plain JSON Schema registered by name with `schema(name, definition)`, which returns
 *   a `$ref`. Each feature declares its resources beside its controllers (`*.schemas.ts`).
 * - Query parameters: `@ApiQuery({ name, required: false, schema })`; `ApiPagingQuery()` for page/per_page,
 *   `ApiSortQuery(fields)` for sort.
 * - Added to every operation when the document is built (`completeOperations`, setup.ts), from the same metadata the guards
 *   read: bearer security and 401 unless `@Public()`, 403 when `@AdminOnly()`; for a `*_id` path parameter its
 *   integer schema and 400; for PUT/POST/DELETE (unless multipart) 400 `Malformed JSON body`, 413 and 415;
 *   the route's 500. Declare `@ApiAuthenticated()` anyway where it reads better; the two merge.
 *   Module-scoped 403s (role in the module) are the controller's to declare.
 */
import { applyDecorators } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiHeader,
  ApiQuery,
  ApiResponse,
  type ReferenceObject,
  type SchemaObject,
} from '@nestjs/swagger';
import { AUTHENTICATION_REQUIRED_MESSAGE, errorEnvelope, INVALID_TOKEN_MESSAGE } from '../core/errors.js';
import { PagedList } from '../core/paging-links.js';
import {
  PRECONDITION_FAILED_MESSAGE,
  PRECONDITION_REQUIRED_MESSAGE,
  SingleRead,
} from '../core/validators.js';
import { inFieldOrder } from '../core/wire-shape.js';

export type Schema = SchemaObject | ReferenceObject;

/** Every named schema, added to `components.schemas` when the document is built. */
export const namedSchemas: Record<string, SchemaObject> = {};

/** Registers a named response schema and returns a `$ref` to it. */
export function schema(name: string, definition: SchemaObject): ReferenceObject {
  namedSchemas[name] = definition;
  return { $ref: `#/components/schemas/${name}` };
}

/**
 * Always `null`. OpenAPI 3.0 has no null type and `nullable` needs a `type` beside it, or validators reject every
 * example; the `enum` keeps the object type from admitting anything but `null`.
 */
const NULL_DATA: SchemaObject = { type: 'object', nullable: true, enum: [null] };

export const ErrorEnvelope = schema('ErrorEnvelope', {
  type: 'object',
  required: ['success', 'data', 'message'],
  additionalProperties: false,
  properties: {
    success: { type: 'boolean', enum: [false] },
    data: NULL_DATA,
    message: { type: 'string' },
  },
});

/** `{ success: true, data, message }` around a data schema (`null` for routes that return nothing). */
export function envelope(data: Schema | null, message: string): SchemaObject {
  return {
    type: 'object',
    required: ['success', 'data', 'message'],
    additionalProperties: false,
    properties: {
      success: { type: 'boolean', enum: [true] },
      data: data ?? NULL_DATA,
      message: { type: 'string', example: message },
    },
  };
}

/** The success response of a route. */
export function ApiOk(status: number, message: string, data: Schema | null, description = message) {
  return ApiResponse({ status, description, schema: envelope(data, message) });
}

/** A failure response: the error envelope, with each message it can carry as an example. */
export function errorResponse(messages: string[]) {
  return {
    description: messages.join(' | '),
    content: {
      'application/json': {
        schema: ErrorEnvelope,
        examples: Object.fromEntries(
          messages.map((message, index) => [
            `e${index + 1}`,
            { summary: message, value: errorEnvelope(message) },
          ]),
        ),
      },
    },
  };
}

/** The failure responses of a route: status → the messages it can carry (shown as examples). */
export function ApiErrors(failures: Record<number, string[]>) {
  return applyDecorators(
    ...Object.entries(failures).map(([status, messages]) =>
      ApiResponse({ status: Number(status), ...errorResponse(messages) }),
    ),
  );
}

export const UNAUTHENTICATED_MESSAGES = [AUTHENTICATION_REQUIRED_MESSAGE, INVALID_TOKEN_MESSAGE];
const UNAUTHENTICATED = UNAUTHENTICATED_MESSAGES;

/** Bearer security and its 401. */
export function ApiAuthenticated() {
  return applyDecorators(ApiBearerAuth('bearer'), ApiErrors({ 401: UNAUTHENTICATED }));
}

/** `page` and `per_page`, and the `Link` header every paged list answers (docs/api.md §17). */
export function ApiPagingQuery() {
  return applyDecorators(
    PagedList(),
    ApiQuery({
      name: 'page',
      required: false,
      description: 'Page number, from 1 (smaller values are clamped to 1).',
      schema: { type: 'integer', format: 'int32', default: 1, example: 1 },
    }),
    ApiQuery({
      name: 'per_page',
      required: false,
      description: 'Page size, clamped to 1..100.',
      schema: { type: 'integer', format: 'int32', default: 20, example: 20 },
    }),
  );
}

const ETAG_HEADER = {
  ETag: { description: "A strong validator: a hash of the answer's data.", schema: { type: 'string' } },
};

/** A single read's validators (docs/api.md §17): its ETag, If-None-Match and the 304. */
export function ApiSingleRead() {
  return applyDecorators(
    SingleRead(),
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description:
        'ETags of an earlier read (comma-separated, `W/` accepted) or `*`: 304 when one is current.',
      schema: { type: 'string' },
    }),
    ApiResponse({
      status: 304,
      description: 'Not modified: the ETag named is current (no body).',
      headers: ETAG_HEADER,
    }),
  );
}

/** A write that takes If-Match (docs/api.md §17): its 412 and 428. */
export function ApiIfMatch() {
  return applyDecorators(
    ApiHeader({
      name: 'If-Match',
      required: false,
      description:
        "ETags of the resource's single read (comma-separated, `W/` accepted) or `*`: 412 when none is current; " +
        'required (428) with REQUIRE_IF_MATCH=true.',
      schema: { type: 'string' },
    }),
    ApiErrors({ 412: [PRECONDITION_FAILED_MESSAGE], 428: [PRECONDITION_REQUIRED_MESSAGE] }),
  );
}

export function ApiSortQuery(fields: readonly string[], defaultOrder: string) {
  return ApiQuery({
    name: 'sort',
    required: false,
    description:
      `Comma-separated fields of ${fields.join(', ')}; a leading "-" sorts descending. ` +
      `Default order: ${defaultOrder}; ties are broken by id ascending.`,
    schema: { type: 'string', example: fields.length > 1 ? `${fields[0]},-${fields[1]}` : fields[0] },
  });
}

/** Paged list data: `{ <items>: [...], page, per_page, total }`. */
export function pagedSchema(itemsKey: string, item: Schema): SchemaObject {
  return {
    type: 'object',
    required: [itemsKey, 'page', 'per_page', 'total'],
    additionalProperties: false,
    properties: {
      [itemsKey]: { type: 'array', items: item },
      page: { type: 'integer', minimum: 1, example: 1 },
      per_page: { type: 'integer', minimum: 1, maximum: 100, example: 20 },
      total: { type: 'integer', minimum: 0, example: 1 },
    },
  };
}

/**
 * The schema of a wire shape (core/wire-shape.ts): every field required, nothing else allowed, the properties
 * in the fields' order. `properties` is declared `satisfies PerField<Shape, Schema>` beside it, so it holds
 * exactly the shape's fields.
 */
export function shapeSchema<K extends string>(
  fields: readonly K[],
  properties: Readonly<Record<K, Schema>>,
  description?: string,
): SchemaObject {
  return {
    type: 'object',
    ...(description === undefined ? {} : { description }),
    required: [...fields],
    additionalProperties: false,
    properties: inFieldOrder(fields, properties),
  };
}
