import { type FastifyInstance } from 'fastify';
import { MALFORMED_JSON_MESSAGE } from '../core/errors.js';
import { ownAnswersOf } from '../core/own-answers.js';

/** Deeper than any body the API takes (a bulk user list is 3 levels). */
const JSON_MAX_DEPTH = 32;
/** Values (object members and array elements) in one body: 500 users × 4 fields, or 1000 ids, fit easily. */
const JSON_MAX_VALUES = 20_000;

/** Whether a parsed JSON value stays within the depth and size bounds; iterative, so no recursion limit. */
function withinJsonBounds(body: unknown): boolean {
  const stack: [unknown, number][] = [[body, 1]];
  let values = 0;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > JSON_MAX_DEPTH) return false;
    const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
    values += children.length;
    if (values > JSON_MAX_VALUES) return false;
    for (const child of children) stack.push([child, depth + 1]);
  }
  return true;
}

function isParsedJson(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(body);
  return Array.isArray(body) || prototype === Object.prototype || prototype === null;
}

/**
 * A JSON body nested deeper than {@link JSON_MAX_DEPTH} or holding more than {@link JSON_MAX_VALUES} values is
 * answered as malformed (400) before anything else looks at it: validating it would recurse until the stack
 * runs out (a 500) or spend seconds listing tens of thousands of unknown properties.
 */
export function boundJsonBodies(fastify: FastifyInstance): void {
  fastify.addHook('preValidation', (request, reply, done) => {
    // Only what JSON.parse builds: a CSV upload's body is a stream, whose internals are no JSON at all.
    if (isParsedJson(request.body) && !withinJsonBounds(request.body)) {
      const own = ownAnswersOf(request)?.error(400, MALFORMED_JSON_MESSAGE, undefined);
      if (own) void reply.code(400).type(own.contentType).send(own.body);
      else void reply.code(400).send({ success: false, data: null, message: MALFORMED_JSON_MESSAGE });
      return;
    }
    done();
  });
}
